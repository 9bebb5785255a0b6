#include "serve/http_text.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cadclip/core/format.h"

namespace cadclip::serve::detail {
namespace {

const char* reason_phrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
    text.remove_suffix(1);
  return text;
}

}  // namespace

std::string error_body(int status, std::string_view message, std::string_view request_id) {
  const nlohmann::json body = {
      {"error",
       {{"status", status}, {"message", printable(message, 2000)}, {"request_id", request_id}}}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string http_error_response(int status, const std::string& message, const std::string& id,
                                const std::string& extra_headers) {
  const std::string body = error_body(status, message, id);
  return format("HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
                status, reason_phrase(status), body.size()) +
         "X-Request-Id: " + id + "\r\n" + extra_headers + "Connection: close\r\n\r\n" + body;
}

std::string printable(std::string_view text, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  auto escape = [&](unsigned char byte) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02X", byte);
    out += hex;
  };
  while (i < text.size()) {
    if (out.size() >= max_bytes) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) {
        escape(c);
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // The length and the range of the second byte of a well-formed sequence
    // (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
    int length = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;
      if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;
      if (c == 0xF4) high = 0x8F;
    }
    bool valid = length > 0 && i + length <= text.size();
    for (int k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      valid = k == 1 ? next >= low && next <= high : next >= 0x80 && next <= 0xBF;
    }
    if (valid) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      escape(c);
      ++i;
    }
  }
  return out;
}

size_t head_end(const std::string& buffer, size_t from) {
  for (size_t i = buffer.find('\n', from); i != std::string::npos; i = buffer.find('\n', i + 1)) {
    if (i + 1 < buffer.size() && buffer[i + 1] == '\n') return i + 2;
    if (i + 2 < buffer.size() && buffer[i + 1] == '\r' && buffer[i + 2] == '\n') return i + 3;
  }
  return std::string::npos;
}

Head parse_head(std::string_view head) {
  Head h;
  bool first = true;
  while (!head.empty()) {
    const size_t end = head.find('\n');
    std::string_view line = head.substr(0, end);
    head.remove_prefix(end == std::string_view::npos ? head.size() : end + 1);
    line = trim(line);
    if (first) {
      first = false;
      const size_t a = line.find(' ');
      const size_t b = a == std::string_view::npos ? a : line.find(' ', a + 1);
      if (a != std::string_view::npos) {
        h.method = std::string(line.substr(0, a));
        h.target = std::string(line.substr(a + 1, b == std::string_view::npos ? b : b - a - 1));
      }
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string name = lower(trim(line.substr(0, colon)));
    const std::string_view value = trim(line.substr(colon + 1));
    if (name == "content-length") h.content_lengths.emplace_back(value);
    if (name == "transfer-encoding") h.transfer_encoding = true;
    if (name == "expect" && lower(value) == "100-continue") h.expect_continue = true;
  }
  return h;
}

std::optional<int64_t> parse_length(const std::string& text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace cadclip::serve::detail
