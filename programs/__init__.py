"""deltaseek's programs: the agent, its tools, its language models and the command line."""

import os

# litellm fetches its model price list from the internet at import, retrying for seconds when
# offline; the copy bundled with litellm is enough for deltaseek.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
