"""Test helpers: puts bindings/python on sys.path (when PYTHONPATH does not) and says whether NumPy is there."""
import os
import sys
import tempfile

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _PKG not in sys.path:
    sys.path.insert(0, _PKG)

try:
    import numpy  # noqa: F401
    HAVE_NUMPY = True
except ImportError:
    HAVE_NUMPY = False

NUMPY_REASON = "numpy is not installed (Debian: apt-get install python3-numpy)"


def temp_path(test, name):
    """A path in a temporary folder removed after `test`."""
    d = tempfile.TemporaryDirectory(prefix="ember-py-")
    test.addCleanup(d.cleanup)
    return os.path.join(d.name, name)
