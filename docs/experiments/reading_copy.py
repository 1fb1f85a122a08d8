"""The reader adapter on the shipped 4-bit model and on its 8-bit reading copy (`reading_copy.py`).

    python docs/experiments/reading_copy.py prompt   # one 175-token prompt: evaluation and a generated token, each file
    python docs/experiments/reading_copy.py dev      # the shipped adapter's dev figures as llama.cpp reads them, each file

`prompt` times llama.cpp evaluating the same prompt five times and generating ten tokens, on the
base and its copy, with the adapter applied and without. `dev` reads the 160 dev questions the
adapter's bound is chosen on (`train_adapter.runtime_figures`) with each file as the base.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from unittest import mock

import llama_cpp

from deltaseek.bundled import labeled_set
from deltaseek.optimize import train_adapter
from deltaseek.programs.agent.learned_reader import adapter
from deltaseek.programs.agent.learned_reader.model import shipped_reader
from deltaseek.programs.lm.gguf_file import find_smollm2_gguf
from deltaseek.programs.lm.prefix_cache import clear_memory
from deltaseek.programs.lm.reading_copy import q8_copy

PROMPT = ("Passage: " + "The old mill by the river ground oats for the town until a flood broke its wheel. " * 9
          + "\nQuestion: What broke the wheel?\nAnswer:")


def bases() -> dict[str, Path]:
    base = find_smollm2_gguf()
    return {"4-bit (Q4_1, shipped)": base, "8-bit copy (Q8_0)": q8_copy(base)}


def prompt_times() -> None:
    lora = str(shipped_reader().adapter)
    for name, base in bases().items():
        for applied in (True, False):
            llama = llama_cpp.Llama(model_path=str(base), n_ctx=1024, n_threads=1, n_threads_batch=2, verbose=False,
                                    seed=0, **({"lora_path": lora} if applied else {}))
            tokens = llama.tokenize(PROMPT.encode(), add_bos=False, special=False)
            evaluations = []
            for _ in range(5):
                llama.reset()
                clear_memory(llama)
                started = time.perf_counter()
                llama.eval(tokens)
                evaluations.append(time.perf_counter() - started)
            started = time.perf_counter()
            for token in tokens[:10]:
                llama.eval([token])
            generated = (time.perf_counter() - started) / 10
            print(f"{name}, adapter {'applied' if applied else 'off'}: {len(tokens)}-token prompt "
                  f"{sorted(evaluations)[2]:.2f} s (median of 5), a generated token {1000 * generated:.1f} ms")


def dev_figures() -> None:
    parts = train_adapter.dataset_examples([str(labeled_set("squad2_articles"))])
    dev = train_adapter.dev_sample(parts["dev"])
    path = Path(shipped_reader().adapter)
    for name, base in bases().items():
        started = time.perf_counter()
        with mock.patch.object(adapter, "q8_copy", lambda _, base=base: base):  # read on this file as it is
            figures = train_adapter.runtime_figures(path, dev)
        print(f"{name}: {figures} in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    {"prompt": prompt_times, "dev": dev_figures}[sys.argv[1] if len(sys.argv) > 1 else "prompt"]()
