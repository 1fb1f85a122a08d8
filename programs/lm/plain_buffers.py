"""Every model this process loads with llama.cpp keeps its weights in plain CPU buffers.

By default llama.cpp repacks a model's weights into a CPU's extra buffer types where it has one:
AMX tiles on recent Xeons. There, llama-cpp-python 0.3.36 crashed the process in its first decode
(a segmentation fault in `llama_decode`), with the embedded model alone and with the reader
adapter applied ("lora for 'blk.9.ffn_up.weight' cannot use buft 'AMX', fallback to CPU"): the
crash llama.cpp's issue 20824 reports in `ggml_backend_amx_mul_mat`. With the weights as the
file stores them the same machine answers. `Llama` takes no option for it, so the defaults it
reads its model parameters from are the ones changed; a llama.cpp without the field is left as it is.
"""

from __future__ import annotations


def keep_weights_in_plain_buffers(llama_cpp) -> None:
    """Make the `llama_cpp` module's model defaults load weights without extra buffer types (once)."""
    module = llama_cpp.llama_cpp
    defaults = module.llama_model_default_params
    if getattr(defaults, "keeps_plain_buffers", False):
        return

    def plain_defaults():
        params = defaults()
        if "use_extra_bufts" in dict(type(params)._fields_):
            params.use_extra_bufts = False
        return params

    plain_defaults.keeps_plain_buffers = True
    module.llama_model_default_params = plain_defaults
