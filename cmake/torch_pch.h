// The LibTorch headers that most cadclip translation units include, compiled
// once. Sources still include the narrow headers they need.
#pragma once
#include <ATen/ATen.h>
#include <torch/nn.h>
#include <torch/optim.h>
#include <torch/types.h>
