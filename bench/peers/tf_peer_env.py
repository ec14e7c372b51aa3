"""What every TensorFlow peer script does before it imports TensorFlow: run under the venv of
`make tf-ops` (.venvs/tf) when the current interpreter lacks TensorFlow, skip with a message
when there is none, and load tensorkit's op library (skip when it is not built)."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
VENV_PYTHON = os.path.join(ROOT, ".venvs", "tf", "bin", "python")


def tensorflow_or_exit(script):
    """Returns when `import tensorflow` works here; else re-runs this process's command line with
    the venv's interpreter (and exits with its status), or exits 0 saying why `script` skipped."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before TensorFlow's first import
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        if os.path.exists(VENV_PYTHON) and os.path.realpath(sys.executable) != os.path.realpath(
                VENV_PYTHON):
            sys.exit(subprocess.run([VENV_PYTHON, *sys.argv]).returncode)
        print(f"{script}: skipped, no TensorFlow (make tf-ops installs it into .venvs/tf)")
        sys.exit(0)


def tensorkit_ops_or_exit(build, script):
    """The loaded libtensorkit_tf_ops.so of build dir `build`; exits 0 when it is not built."""
    sys.path.insert(0, os.path.join(ROOT, "embed", "tensorflow"))
    import tensorkit_tf

    lib = os.path.join(ROOT, build, "lib", "libtensorkit_tf_ops.so")
    if not os.path.exists(lib):
        print(f"{script}: skipped, {lib} is not built (make tf-ops)")
        sys.exit(0)
    os.environ["TENSORKIT_TF_OPS"] = lib  # tensorkit_tf's functions use the same library
    return tensorkit_tf.load(lib)
