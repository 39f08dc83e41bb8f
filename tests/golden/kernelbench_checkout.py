"""The kernelbench package of a KernelBench checkout, importable with the project's .venv (for the
golden generators kernelbench_prompts.py and kernelbench_static.py): the checkout's src/ goes first
on sys.path, and the two API clients the package imports but the prompt and the checker never use
(openai, litellm) are replaced by empty stand-in modules when they are not installed.
"""
import os
import subprocess
import sys
import types


def _stand_in(name, **attributes):
    try:
        __import__(name)
    except ImportError:
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        sys.modules[name] = module


def use_checkout(checkout):
    sys.path.insert(0, os.path.join(os.path.abspath(checkout), "src"))
    _stand_in("openai", OpenAI=None)
    _stand_in("litellm", completion=None)


def commit_of(checkout):
    try:
        return subprocess.run(["git", "-C", checkout, "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
