// libFuzzer: `cadclip serve`'s request handling on any bytes sent to it: the
// reception thread (request heads, Content-Length and the other guards), then
// httplib's parser and handlers that echo what they were sent, as the API's
// do. Every answer must be HTTP with a status, every JSON answer valid JSON;
// and the text helpers every error message goes through must always give
// valid UTF-8 and valid JSON.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cadclip/data/utf8.h"
#include "serve/connections.h"

namespace {

namespace detail = cadclip::serve::detail;

// One server for the whole run, on a free port of 127.0.0.1.
int server_port() {
  static int port = [] {
    detail::ConnectionOptions options;
    options.threads = 2;
    options.header_timeout_s = 2;
    options.body_timeout_s = 2;
    options.max_body_bytes = 1 << 20;
    static detail::HttpServer server(options);
    auto echo = [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(nlohmann::json{{"path", detail::printable(req.path)},
                                     {"params", static_cast<int64_t>(req.params.size())}}
                          .dump(),
                      "application/json");
    };
    server.Get("/(.*)", echo);
    server.Post("/(.*)", [](const httplib::Request& req, httplib::Response& res,
                            const httplib::ContentReader& reader) {
      size_t bytes = 0;
      if (req.is_multipart_form_data()) {
        reader([](const httplib::MultipartFormData&) { return true; },
               [&](const char*, size_t n) {
                 bytes += n;
                 return true;
               });
      } else {
        reader([&](const char*, size_t n) {
          bytes += n;
          return true;
        });
      }
      res.set_content(nlohmann::json{{"bytes", bytes}}.dump(), "application/json");
    });
    server.set_error_handler(
        httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
          if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
          res.set_content(detail::error_body(res.status, "refused", detail::current_request_id()),
                          "application/json");
          return httplib::Server::HandlerResponse::Handled;
        }));
    const int bound = server.bind_to_any_port("127.0.0.1");
    std::thread([] { server.listen_after_bind(); }).detach();
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return bound;
  }();
  return port;
}

void check_text_helpers(std::string_view text) {
  const std::string shown = detail::printable(text, 64);
  if (cadclip::data::first_invalid_utf8(shown)) std::abort();
  for (const char c : shown)
    if (static_cast<unsigned char>(c) < 0x20) std::abort();
  const nlohmann::json body =
      nlohmann::json::parse(detail::error_body(400, text, text), nullptr, false);
  if (!body.is_object()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string request(reinterpret_cast<const char*>(data), size);
  check_text_helpers(request);

  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(server_port()));
  ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) std::abort();
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
  std::string answer;
  char buffer[8192];
  ssize_t n;
  // A signal to this process (EINTR) is no fault of the server: read on.
  while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) answer.append(buffer, n);
  const int error = n < 0 ? errno : 0;
  ::close(fd);
  // A request that the client ended must be answered, or the connection
  // closed, at once; and never by a reset, which can cost the client its answer.
  if (error != 0) {
    std::fprintf(stderr, "no clean end of the answer: %s; got %zu bytes\n", std::strerror(error),
                 answer.size());
    std::abort();
  }
  if (answer.empty()) return 0;  // closed without an answer: nothing (or nothing more) to say
  if (!answer.starts_with("HTTP/1.1 ")) std::abort();
  const int status = std::atoi(answer.c_str() + 9);
  if (status < 100 || status > 599) std::abort();
  const size_t head_end = answer.find("\r\n\r\n");
  if (head_end == std::string::npos) std::abort();
  const std::string head = answer.substr(0, head_end);
  // An answer to HEAD has the headers of the GET answer and no body. The
  // method is the request line's first word, also when the line is
  // malformed ("HEAD" alone, answered 400 without a body).
  const size_t method_end = request.find_first_of(" \r\n");
  const bool head_request = request.substr(0, method_end) == "HEAD";
  if (!head_request && head.find("Content-Type: application/json") != std::string::npos) {
    const size_t at = head.find("Content-Length: ");
    if (at == std::string::npos) std::abort();
    const size_t length = std::strtoull(head.c_str() + at + 16, nullptr, 10);
    if (head_end + 4 + length > answer.size()) std::abort();
    const nlohmann::json body =
        nlohmann::json::parse(answer.substr(head_end + 4, length), nullptr, false);
    if (body.is_discarded()) std::abort();
  }
  return 0;
}
