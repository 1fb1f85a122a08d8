"""A tiny llama of random weights with the packaged SmolLM2's tokenizer, written as GGUF: a second
model file for the `--lm PATH` tests, and a base small enough to fine-tune a reader adapter on in
seconds."""

from pathlib import Path

import numpy as np

from deltaseek.programs.lm import find_smollm2_gguf

TINY_TEMPLATE = ("{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")
"""Not SmolLM2's ChatML: a prompt built with it shows the engine read the file's own template."""


def write_tiny_llama_gguf(path: Path, n_embd: int = 64, n_ff: int = 128, n_head: int = 4, n_head_kv: int = 2,
                          quantized=None) -> Path:
    """A one-layer llama of random weights (seeded) with the packaged SmolLM2's tokenizer, as GGUF;
    `quantized` (a GGMLQuantizationType): its matrices stored so, as the packaged model's are."""
    import gguf
    from gguf.quants import quantize

    source = gguf.GGUFReader(find_smollm2_gguf())
    vocab = len(source.fields["tokenizer.ggml.tokens"].data)
    writer = gguf.GGUFWriter(path, arch="llama")
    writer.add_name("tiny random llama")
    writer.add_block_count(1)
    writer.add_context_length(8192)
    writer.add_embedding_length(n_embd)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head_kv)
    writer.add_rope_dimension_count(n_embd // n_head)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(vocab)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32 if quantized is None else gguf.LlamaFileType[f"MOSTLY_{quantized.name}"])
    for key, field in source.fields.items():
        if key.startswith("tokenizer.ggml."):
            sub_type = field.types[1] if field.types[0] == gguf.GGUFValueType.ARRAY else None
            writer.add_key_value(key, field.contents(), field.types[0], sub_type=sub_type)
    writer.add_chat_template(TINY_TEMPLATE)

    rng = np.random.default_rng(0)

    def weights(*shape):  # numpy's shape is GGUF's dimensions reversed
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    n_embd_kv = n_embd // n_head * n_head_kv
    tensors = {"token_embd.weight": weights(vocab, n_embd), "output_norm.weight": np.ones(n_embd, np.float32),
               "blk.0.attn_norm.weight": np.ones(n_embd, np.float32), "blk.0.attn_q.weight": weights(n_embd, n_embd),
               "blk.0.attn_k.weight": weights(n_embd_kv, n_embd), "blk.0.attn_v.weight": weights(n_embd_kv, n_embd),
               "blk.0.attn_output.weight": weights(n_embd, n_embd), "blk.0.ffn_norm.weight": np.ones(n_embd, np.float32),
               "blk.0.ffn_gate.weight": weights(n_ff, n_embd), "blk.0.ffn_up.weight": weights(n_ff, n_embd),
               "blk.0.ffn_down.weight": weights(n_embd, n_ff)}
    for name, tensor in tensors.items():
        if quantized is not None and tensor.ndim == 2:
            blocks = quantize(tensor, quantized)
            writer.add_tensor(name, blocks, raw_shape=blocks.shape, raw_dtype=quantized)
        else:
            writer.add_tensor(name, tensor)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def lora_tensors(rank: int, seed: int = 0) -> dict[str, np.ndarray]:
    """peft's LoRA tensors for the tiny llama's one layer (64 wide, 128 in the MLP, 32 for keys)."""
    rng = np.random.default_rng(seed)
    sizes = {"self_attn.q_proj": (64, 64), "self_attn.k_proj": (64, 32), "self_attn.v_proj": (64, 32),
             "self_attn.o_proj": (64, 64), "mlp.gate_proj": (64, 128), "mlp.up_proj": (64, 128),
             "mlp.down_proj": (128, 64)}
    tensors = {}
    for name, (inputs, outputs) in sizes.items():
        key = f"base_model.model.model.layers.0.{name}"
        tensors[f"{key}.lora_A.default.weight"] = rng.standard_normal((rank, inputs)).astype(np.float32) * 0.1
        tensors[f"{key}.lora_B.default.weight"] = rng.standard_normal((outputs, rank)).astype(np.float32) * 0.1
    return tensors
