// BRepGraph consistency check and a compact byte encoding of one graph: the
// record that prepare workers send over their pipe and that the prepare
// journal stores. (Shards, the dataset format, are safetensors: see shard.h.)
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "cadclip/core/error.h"
#include "cadclip/data/brep_graph.h"

namespace cadclip::data {

// ok when every array has the size its face and edge counts imply, edge ends
// name existing faces, enum values are in range and floats are finite;
// otherwise the first problem found.
Status validate_graph(const BRepGraph& graph);

// Little-endian bytes of `graph`, versioned; decode_graph(encode_graph(g)) == g.
std::string encode_graph(const BRepGraph& graph);
// Throws cadclip::Error when `bytes` are not an encoded graph (wrong version,
// truncated, inconsistent sizes); `what` names the source in the message.
BRepGraph decode_graph(std::span<const std::byte> bytes, const std::string& what);

}  // namespace cadclip::data
