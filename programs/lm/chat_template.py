"""The model's own chat template (from its GGUF metadata), and where a prompt's fixed prefix ends."""

from __future__ import annotations


def chat_formatter(llama):
    """The formatter llama-cpp-python itself builds from the GGUF's chat template, or None when
    the model uses another chat format (prefix reuse is then off)."""
    from llama_cpp import llama_chat_format

    template = llama.metadata.get("tokenizer.chat_template")
    if llama.chat_format != "chat_template.default" or not template:
        return None

    def token_text(token: int) -> str:
        return llama.detokenize([token], special=True).decode("utf-8", "replace") if token >= 0 else ""

    return llama_chat_format.Jinja2ChatFormatter(template=template, eos_token=token_text(llama.token_eos()),
                                                 bos_token=token_text(llama.token_bos()),
                                                 stop_token_ids=[llama.token_eos()])


def prompt_prefix_tokens(llama, formatter, messages: list[dict]) -> list[int]:
    """The tokens the whole prompt shares with the same prompt whose last message is empty: the
    system message, the demos and the last message's header. A pure function of the request, so
    a cache hit and a miss split the prompt at the same place."""
    def tokens(msgs):
        response = formatter(messages=msgs)
        return llama.tokenize(response.prompt.encode("utf-8"), add_bos=not response.added_special, special=True)

    whole = tokens(messages)
    if len(messages) < 2 or len(whole) >= llama.n_ctx():
        return []  # nothing fixed to reuse, or a prompt the completion call will refuse with its own error
    probe = tokens([*messages[:-1], {**messages[-1], "content": ""}])
    shared = 0
    for a, b in zip(whole, probe):
        if a != b:
            break
        shared += 1
    # keep at least one token to evaluate after the prefix, so sampling reads fresh logits
    return whole[:min(shared, len(whole) - 1)]
