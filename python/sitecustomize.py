"""sitecustomize for `trainscope record --python` and `--torch`: record's
PYTHONPATH puts this folder first, so every Python process of the traced job
imports this at startup and installs the Python collector (filter from
TRAINSCOPE_PYTHON_FILTER) and/or the hook that starts torch's profiler when
torch is imported (trainscope_torch.py). Then the sitecustomize this one
shadows (Debian ships one) still runs."""
import os
import sys

if os.environ.get("TRAINSCOPE_TORCH") == "1":
    try:
        import trainscope_torch
        trainscope_torch.install()
    except Exception as e:  # never break the traced program
        sys.stderr.write("trainscope: --torch: import hook not installed: %s\n" % e)

if os.environ.get("TRAINSCOPE_PYTHON") == "1":
    try:
        import trainscope_trace
        trainscope_trace.install_profiler(os.environ.get("TRAINSCOPE_PYTHON_FILTER") or None)
    except Exception as e:  # never break the traced program
        sys.stderr.write("trainscope: python collector not installed: %s\n" % e)


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    import importlib.machinery
    import importlib.util
    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec and spec.origin and os.path.abspath(spec.origin) != os.path.abspath(__file__):
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except Exception:
            pass


_chain()
