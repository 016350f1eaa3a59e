"""nn.Sequential: one ember_module composed at run time from the layers' descriptions."""
from ..serialization import Record, load_module_record
from .modules import Layer, Module
from .parameter import EmberModule


def _flatten(layers):
    out = []
    for layer in layers:
        if isinstance(layer, Sequential):
            out.extend(layer._layers)
        elif isinstance(layer, Layer):
            out.append(layer)
        else:
            raise TypeError("Sequential: %r is not an ember.nn layer (custom Python modules cannot run inside "
                            "libember's Sequential)" % (layer,))
    return out


def _carried(layers):
    """The EmberModule whose params the new Sequential takes over, or None.

    libember cannot set a param, only load a record whose paths ("layers.<i>.<name>") match. So params can be
    carried over only from one module whose layers form the start of the new Sequential, in their own order (a
    layer that ran alone, or a nested Sequential, put first); other layers must be fresh."""
    carry = None
    for i, layer in enumerate(layers):
        m = layer._module
        if m is None:
            continue
        if carry is None and i == 0:
            carry = m
        if m is not carry or layer._index != i:
            raise ValueError(
                "Sequential: layer %d (%r) already has parameters (it ran alone or belongs to another Sequential); "
                "only those of layers at the start, in their own order, can be carried over. Build the other "
                "layers fresh." % (i, layer))
    if carry is not None and {k for k, layer in enumerate(layers) if layer._module is carry} != \
            set(range(carry.n_layers)):
        raise ValueError("Sequential: only some layers of a module with parameters were given; its record "
                         "would put their params on the wrong layers")
    return carry


class Sequential(Module):
    """Layers run in order by libember (ember_module_forward), in train or eval mode as set by train()/eval().

    Its params are named by record path, ``layers.<i>.<name>``. Nested Sequentials are flattened. Layers that
    already have params (one that ran alone, a nested Sequential) keep their values when they come first, in
    their own order; they are carried over through a record (libember cannot set a param at any other position).
    The layer objects become views of the new Sequential."""

    def __init__(self, *layers, device=None):
        if len(layers) == 1 and isinstance(layers[0], (list, tuple)):
            layers = tuple(layers[0])
        layers = _flatten(layers)
        if not layers:
            raise ValueError("Sequential needs at least one layer")
        carry = _carried(layers)
        self._layers = layers
        self._module = EmberModule([layer._desc() for layer in layers], device)
        if carry is not None:
            load_module_record(self._module, Record._from_module(carry), strict=False)
        for i, layer in enumerate(layers):
            layer._module, layer._index, layer._standalone = self._module, i, False

    def children(self):
        return iter(self._layers)

    def __len__(self):
        return len(self._layers)

    def __iter__(self):
        return iter(self._layers)

    def __getitem__(self, i):
        if isinstance(i, slice):
            raise NotImplementedError("Sequential: slicing would need a new ember_module with copied params")
        return self._layers[i]

    def forward(self, x):
        return self._module.forward(x, self.training)

    def _ember_module(self):
        return self._module

    def _all_params(self):
        m = self._module
        return [(s.path, m.param(s.index)) for s in m.specs()]

    def __repr__(self):
        inner = "".join("\n  (%d): %r" % (i, layer) for i, layer in enumerate(self._layers))
        return "Sequential(%s\n)" % inner
