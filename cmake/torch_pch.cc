// Anchors the precompiled LibTorch header (cmake/torch_pch.h).
