"""The package's shape, checked on its source with `ast`: no import inside a function body, no module assigning
attributes onto a class defined in another module (monkey-patching), no cycle among ember's own imports, and the
records module (serialization.py) a leaf over the low-level layers."""
import ast
import importlib
import os
import unittest

import _support  # noqa: F401  (puts the package on sys.path)
import ember

# What the records module may import: the ctypes layer, conversions and the exceptions (never tensor, nn or optim).
RECORDS_MODULE = "ember.serialization"
LOW_LEVEL = {"ember._lib", "ember._convert", "ember.errors"}
_MISSING = object()


def package_modules(package_dir, package_name="ember"):
    """{dotted module name: (path, is_package)} of every .py file under package_dir."""
    out = {}
    for folder, _, files in os.walk(package_dir):
        for f in files:
            if not f.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(folder, f), package_dir)[:-3].split(os.sep)
            is_package = rel[-1] == "__init__"
            parts = [package_name] + (rel[:-1] if is_package else rel)
            out[".".join(parts)] = (os.path.join(folder, f), is_package)
    return out


def imports_in_functions(tree):
    """[(line, function name)] of every import statement inside a function or lambda body."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    found.add((inner.lineno, getattr(node, "name", "<lambda>")))
    return sorted(found)


def _run_at_import(node):
    """The nodes of `node` that run when the module is imported: not function or lambda bodies."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _run_at_import(child)


def _attribute_targets(target):
    if isinstance(target, ast.Attribute):
        yield target
    elif isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            yield from _attribute_targets(t)


def patched_objects(tree):
    """[(line, expression node)] of the objects that module-level code sets attributes on: `X.attr = ...` (also
    augmented and annotated) and `setattr(X, ...)`."""
    out = []
    for stmt in tree.body:
        for node in _run_at_import(stmt):
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                    and node.args:
                out.append((node.lineno, node.args[0]))
                continue
            else:
                continue
            for t in targets:
                out.extend((node.lineno, a.value) for a in _attribute_targets(t))
    return out


def resolve(expr, namespace):
    """The object a Name or dotted Attribute expression denotes in `namespace` (a module's globals), or _MISSING."""
    if isinstance(expr, ast.Name):
        return namespace.get(expr.id, _MISSING)
    if isinstance(expr, ast.Attribute):
        owner = resolve(expr.value, namespace)
        return _MISSING if owner is _MISSING else getattr(owner, expr.attr, _MISSING)
    return _MISSING


def foreign_class_patches(tree, namespace, module_name):
    """[(line, class)] where module-level code sets an attribute on a class defined in another module."""
    out = []
    for line, expr in patched_objects(tree):
        obj = resolve(expr, namespace)
        if isinstance(obj, type) and obj.__module__ != module_name:
            out.append((line, "%s.%s" % (obj.__module__, obj.__qualname__)))
    return out


def import_edges(module_name, is_package, tree, modules):
    """The ember.* modules that `module_name` imports (anywhere in it); `from pkg import sub` counts as pkg.sub
    when sub is a module."""
    package = module_name if is_package else module_name.rpartition(".")[0]
    root = module_name.partition(".")[0]
    edges = set()

    def inside(name):
        return name == root or name.startswith(root + ".")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            edges.update(a.name for a in node.names if inside(a.name))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                base = base + "." + node.module if node.module else base
            else:
                base = node.module or ""
            if not inside(base):
                continue
            for a in node.names:
                sub = base + "." + a.name
                edges.add(sub if sub in modules else base)
    edges.discard(module_name)
    return edges


def find_cycle(graph):
    """One import cycle of {module: set of imported modules} as a list [a, b, ..., a], or None."""
    state = {}  # absent: unvisited, 1: on the current path, 2: done
    path = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


class PackageStructureTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.modules = package_modules(os.path.dirname(ember.__file__))
        cls.trees = {}
        for name, (path, _) in cls.modules.items():
            with open(path, encoding="utf-8") as f:
                cls.trees[name] = ast.parse(f.read(), path)

    def graph(self):
        return {name: import_edges(name, self.modules[name][1], tree, self.modules)
                for name, tree in self.trees.items()}

    def test_sees_the_whole_package(self):
        for name in ("ember", "ember.tensor", "ember.serialization", "ember.nn", "ember.nn.functional"):
            self.assertIn(name, self.modules)

    def test_no_import_inside_a_function(self):
        bad = ["%s:%d in %s()" % (self.modules[name][0], line, fn)
               for name, tree in sorted(self.trees.items()) for line, fn in imports_in_functions(tree)]
        self.assertEqual(bad, [], "imports belong at the top of the module")

    def test_no_module_patches_a_class_from_another_module(self):
        bad = []
        for name, tree in sorted(self.trees.items()):
            namespace = vars(importlib.import_module(name))
            bad += ["%s:%d sets an attribute on %s" % (self.modules[name][0], line, cls)
                    for line, cls in foreign_class_patches(tree, namespace, name)]
        self.assertEqual(bad, [], "a class gets its attributes in its own definition (or from mixins)")

    def test_no_import_cycle(self):
        cycle = find_cycle(self.graph())
        self.assertIsNone(cycle, "import cycle: " + " -> ".join(cycle or []))

    def test_records_import_only_the_low_level_layers(self):
        self.assertLessEqual(self.graph()[RECORDS_MODULE], LOW_LEVEL)


class CheckersCatchViolationsTest(unittest.TestCase):
    """The checkers above flag what they are meant to (so a clean package is a real result)."""

    SOURCE = (
        "import os\n"
        "from . import sibling\n"
        "from .other import Foreign\n"
        "class Own:\n"
        "    pass\n"
        "Own.fine = 1\n"
        "Foreign.patched = 1\n"
        "for _n in ('a', 'b'):\n"
        "    setattr(Foreign, _n, None)\n"
        "sibling.Foreign.deep, x = 1, 2\n"
        "def f():\n"
        "    import json\n"
        "    Foreign.in_function = 1\n"
        "    return lambda: __import__('os')\n"
        "class K:\n"
        "    def m(self):\n"
        "        from . import other\n")

    def setUp(self):
        self.tree = ast.parse(self.SOURCE)

    def test_imports_in_functions(self):
        self.assertEqual(imports_in_functions(self.tree), [(12, "f"), (17, "m")])

    def test_foreign_class_patches(self):
        foreign = type("Foreign", (), {"__module__": "pkg.other"})
        own = type("Own", (), {"__module__": "pkg.mod"})
        sibling = type("module", (), {"Foreign": foreign})
        found = foreign_class_patches(self.tree, {"Foreign": foreign, "Own": own, "sibling": sibling}, "pkg.mod")
        self.assertEqual([line for line, _ in found], [7, 9, 10])
        self.assertEqual({cls for _, cls in found}, {"pkg.other.Foreign"})

    def test_import_edges(self):
        modules = {"pkg", "pkg.mod", "pkg.other", "pkg.sibling"}
        self.assertEqual(import_edges("pkg.mod", False, ast.parse(self.SOURCE.replace("import os", "import pkg")),
                                      modules), {"pkg", "pkg.sibling", "pkg.other"})
        self.assertEqual(import_edges("pkg", True, ast.parse("from . import mod, helper\n"), modules),
                         {"pkg.mod"})

    def test_find_cycle(self):
        self.assertIsNone(find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}))
        self.assertEqual(find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}), ["a", "b", "c", "a"])


if __name__ == "__main__":
    unittest.main()
