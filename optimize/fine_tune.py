"""`deltaseek optimize --train-reader`'s fine-tune of the reader adapter on a user's labeled set
(the train extra installed): `train_adapter.fit_adapter` from the program's own adapter."""

from __future__ import annotations

from pathlib import Path

from deltaseek.optimize.train_adapter import EVAL_EVERY, dataset_examples, fit_adapter
from deltaseek.optimize.train_reader import file_digest


FINE_TUNE_STEPS = 300
"""Steps of `deltaseek optimize --train-reader` on a user's train split, from the shipped adapter:
a few minutes on 2 cores, scored on dev every `EVAL_EVERY // 3`."""


def fine_tune_into(program, dataset: str, corpus: list[str] | None, out: Path, log=print) -> dict[str, float]:
    """`deltaseek optimize --train-reader`, where the train extra is installed: fine-tune the
    program's reader adapter on the set's train split; the program reads with the result (written
    to `out`) only if it reads the set's dev split better than the adapter it started from, beyond
    chance (`paired.beyond_chance`).
    Like DSPy's BootstrapFinetune it changes weights. Returns the figures as metrics."""
    reader = program.learned_reader()
    if not reader.adapter:
        return {}
    parts = dataset_examples([dataset], corpus)
    info = fit_adapter(parts, out, {"datasets": {Path(dataset).name: file_digest(dataset)},
                                    "command": f"deltaseek optimize --dataset {dataset} --train-reader"},
                       steps=min(FINE_TUNE_STEPS, 3 * len(parts["train"])), eval_every=EVAL_EVERY // 3,
                       start_from=Path(reader.adapter), log=log)
    if info is None:
        log(f"reader adapter: no fine-tuned checkpoint read {Path(dataset).name}'s dev split better beyond chance; "
            f"kept {reader.adapter}")
        return {"adapter_fine_tuned": 0.0}
    program.reader = reader.model_copy(update={"adapter": str(Path(out).absolute())})
    log(f"reader adapter: fine-tuned for {info.trained_on['steps']} steps, written to {out}: dev {info.metrics}")
    return {"adapter_fine_tuned": 1.0, "adapter_steps": float(info.trained_on["steps"]),
            **{f"adapter_dev_{k}": float(v) for k, v in info.metrics.items() if isinstance(v, (int, float))}}
