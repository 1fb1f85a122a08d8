"""llama-cpp-python's OpenAI-compatible server, its models loading their weights into plain CPU
buffers (`plain_buffers.py`; on a CPU with AMX, `python -m llama_cpp.server` crashed in its first
decode). It takes `llama_cpp.server`'s own arguments:

    python -m deltaseek.programs.lm.serve --model MODEL.gguf --host 127.0.0.1 --port 8765 --model_alias smollm2
"""

from __future__ import annotations

import runpy

from deltaseek.programs.lm.llamacpp import import_llama_cpp


def main() -> None:
    import_llama_cpp()
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
