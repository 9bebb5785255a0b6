// libFuzzer: what the prepare job reads from a worker process's socket, on
// any bytes: frames, result and drawing headers, encoded graphs. A garbled
// stream must end in "no frame" or a refused header or graph, never in a
// fault, an uncaught exception or an allocation of a size the peer chose.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <thread>

#include "cad/prepare_protocol.h"
#include "cadclip/core/error.h"
#include "cadclip/data/graph_codec.h"

namespace pd = cadclip::cad::prepare_detail;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) std::abort();
  std::thread writer([&] {
    size_t sent = 0;
    while (sent < size) {
      const ssize_t n = ::send(sv[0], data + sent, size - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    ::close(sv[0]);
  });
  while (const std::optional<pd::Frame> frame = pd::recv_frame(sv[1])) {
    if (frame->kind != pd::FrameKind::kResult && frame->kind != pd::FrameKind::kThumbnail) continue;
    std::string_view header_text, body;
    if (!pd::split_payload(frame->payload, header_text, body)) continue;
    const std::optional<pd::ResultHeader> header = pd::parse_result_header(header_text);
    if (!header || !header->ok || frame->kind != pd::FrameKind::kResult) continue;
    try {
      (void)cadclip::data::decode_graph(std::as_bytes(std::span(body.data(), body.size())),
                                        "a fuzzed result");
    } catch (const cadclip::Error&) {
      // Refused with a message: what a garbled graph must get.
    }
  }
  ::close(sv[1]);
  writer.join();
  return 0;
}
