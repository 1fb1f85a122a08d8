"""deltaseek's programs: the agent (`agent/`), its tools (`tools/`), its language models (`lm/`)
and the BM25 index (`index.py`)."""

import os

# litellm fetches its model price list from the internet at import, retrying for seconds when
# offline; the copy bundled with litellm is enough for deltaseek.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
