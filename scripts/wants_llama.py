"""Exit 0 when the effective settings choose the in-process llama.cpp LLM (llm='llama_cpp'), else 1.

run.sh calls it with the app's own arguments (for --config) so that llama-cpp-python is built only for the
people who chose it. Bad settings exit 1 too: the app itself then explains them."""
import sys

from core.config import load_settings
from core.contracts.errors import EcoLensError


def config_argument(argv: list[str]) -> str | None:
    """The value of --config FILE / --config=FILE in the app's arguments."""
    for i, arg in enumerate(argv):
        if arg == "--config" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--config="):
            return arg.split("=", 1)[1]
    return None


def main(argv: list[str]) -> int:
    try:
        return 0 if load_settings(config_argument(argv)).llm == "llama_cpp" else 1
    except EcoLensError:
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
