"""NumPy when it is installed, else None.

NumPy is optional (python3-numpy): imported once here, at module level, so that no function has to import it on
demand and every user checks ``numpy is None`` the same way.
"""
try:
    import numpy
except ImportError:
    numpy = None
