"""The model and data: datasets (`data`), the attention model and its closed forms (`model`),
losses, heads, the cancellation-free gradient (`gradients`) and its fused kernel (`fused`)."""
