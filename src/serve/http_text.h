// The parts of HTTP/1.1 that the serve layer reads and writes by hand
// (private to it): request heads as the reception thread needs them, error
// answers in the API's JSON form, and text made printable for messages and
// logs. Neither reads sockets nor holds state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cadclip::serve::detail {

// The JSON error of the HTTP API: {"error": {"status", "message", "request_id"}}.
// Never throws: invalid UTF-8 in the message is escaped.
std::string error_body(int status, std::string_view message, std::string_view request_id);

// A whole error answer for a connection that closes after it: status line,
// headers (`extra_headers` lines end in CRLF) and error_body.
std::string http_error_response(int status, const std::string& message, const std::string& id,
                                const std::string& extra_headers);

// `text` for a message or a log line: valid UTF-8 kept, every other byte and
// every control character written as \xHH, cut after `max_bytes` with "...".
std::string printable(std::string_view text, size_t max_bytes = 200);

// The position after the blank line that ends a request head in `buffer`,
// searched from `from`; npos while it has not arrived. Lines may end in CRLF
// or a bare LF.
size_t head_end(const std::string& buffer, size_t from);

// What the reception thread needs of a request head.
struct Head {
  std::string method, target;
  std::vector<std::string> content_lengths;
  bool transfer_encoding = false;
  bool expect_continue = false;
};
Head parse_head(std::string_view head);

// A Content-Length value: only decimal digits, not absurdly many.
std::optional<int64_t> parse_length(const std::string& text);

}  // namespace cadclip::serve::detail
