"""sitecustomize for `trainscope record --python` and `--torch`: record's
PYTHONPATH puts this folder first, so every Python process of the traced job
imports this at startup and installs the Python collector (filter from
TRAINSCOPE_PYTHON_FILTER) and/or the hook that starts torch's profiler when
torch is imported (trainscope_torch.py). Then the sitecustomize this one
shadows (Debian ships one) still runs."""
import os
import sys



class _TorchFinder:
    """First on sys.meta_path with --torch: one string comparison per import
    (all a process that never imports torch pays); on `import torch` it hands
    over to trainscope_torch, which starts torch's profiler after torch's own
    import (nothing heavier is imported before then)."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        try:
            sys.meta_path.remove(self)
            import trainscope_torch
            return trainscope_torch.torch_spec()
        except Exception as e:  # never break the traced program
            sys.stderr.write("trainscope: --torch: import hook failed: %s\n" % e)
            return None


if os.environ.get("TRAINSCOPE_TORCH") == "1":
    sys.meta_path.insert(0, _TorchFinder())

if os.environ.get("TRAINSCOPE_PYTHON") == "1":
    try:
        import trainscope_trace
        trainscope_trace.install_profiler(os.environ.get("TRAINSCOPE_PYTHON_FILTER") or None)
    except Exception as e:  # never break the traced program
        sys.stderr.write("trainscope: python collector not installed: %s\n" % e)


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    import importlib.machinery  # cheap, unlike importlib.util (contextlib, ...)
    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec and spec.origin and os.path.abspath(spec.origin) != os.path.abspath(__file__):
        mod = type(sys)(spec.name)
        mod.__spec__, mod.__loader__, mod.__file__ = spec, spec.loader, spec.origin
        try:
            spec.loader.exec_module(mod)
        except Exception:
            pass


_chain()
