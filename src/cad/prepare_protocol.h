// The ingest pool's private parts: the frames that it and its worker
// processes exchange over a socket, and the worker process handle.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cadclip/cad/ingest.h"

namespace cadclip::cad::prepare_detail {

// The worker's end of its socket.
inline constexpr int kWorkerFd = 3;

// The worker states it in its hello ({"protocol": N}); the job refuses a
// worker binary that speaks another version (an older cadclip named by
// --worker-binary) instead of misreading its frames. 2: thumbnails.
inline constexpr int kProtocolVersion = 2;

enum class FrameKind : uint8_t {
  kHello = 'H',      // worker -> job, once started: {"protocol": kProtocolVersion}
  kOptions = 'O',    // job -> worker: IngestOptions as JSON, and "thumbnail": the drawing's
                     // size_px, stroke_px, margin_px (absent: no drawings)
  kTask = 'T',       // job -> worker: {"path", "id", "thumbnail": bool}
  kResult = 'R',     // worker -> job: u64 header length, header JSON, encoded graph (when ok);
                     // the header's "thumbnail_follows" says a kThumbnail frame comes next
  kThumbnail = 'D',  // worker -> job, after kResult: u64 header length, header JSON
                     // {"ok", "reason", "strokes", "seconds"}, the SVG (when ok)
};

// The kOptions payload: the ingest options, and the drawing's style
// (ThumbnailOptions' size_px, stroke_px, margin_px).
std::string options_payload(const IngestOptions& ingest, int size_px, double stroke_px,
                            double margin_px);

// u64 header length, header JSON, then the body: the payload of kResult and
// kThumbnail frames. split_payload returns false for a garbled payload.
std::string join_payload(std::string_view header_json, std::string_view body);
bool split_payload(std::string_view payload, std::string_view& header_json, std::string_view& body);

struct Frame {
  FrameKind kind;
  std::string payload;
};

// The largest payload a frame may hold; a frame that says it holds more is
// garbled (recv_frame gives nullopt, as for a peer that is gone).
inline constexpr uint64_t kMaxFramePayload = uint64_t{1} << 30;

// Whole frames or nothing: false / nullopt when the peer is gone or the frame
// is garbled.
bool send_frame(int fd, FrameKind kind, std::string_view payload);
std::optional<Frame> recv_frame(int fd);

// The header of a kResult or kThumbnail payload as the job reads it.
struct ResultHeader {
  bool ok = false;
  std::string reason;                 // why not ok ("" when the worker sent none)
  double seconds = 0;                 // kResult: ingest time in the worker
  int64_t faces = 0, edges = 0;       // kResult
  std::vector<std::string> warnings;  // kResult: what ingest skipped without failing
  bool thumbnail_follows = false;     // kResult: a kThumbnail frame comes next
};
// nullopt when `json` is not a JSON object or a field has the wrong type:
// a garbled answer.
std::optional<ResultHeader> parse_result_header(std::string_view json);

// One `cadclip prepare-worker` process, started with posix_spawn (a fresh
// exec, never a fork of the job, which may run LibTorch or OpenMP threads).
class WorkerProcess {
 public:
  // Throws cadclip::Error when the process cannot be started.
  static WorkerProcess start(const std::string& binary);
  WorkerProcess() = default;
  WorkerProcess(WorkerProcess&& other) noexcept;
  WorkerProcess& operator=(WorkerProcess&& other) noexcept;
  ~WorkerProcess();

  int fd() const { return fd_; }
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  // Kills the process (SIGKILL) and reaps it.
  void kill_now();
  // Reaps a process that died and says how: "killed by signal 11 (Segmentation
  // fault)", "exited with status 3".
  std::string reap();
  // Closes the socket (the worker's requests end) and waits for it to exit.
  void finish();

 private:
  void close_fd();
  pid_t pid_ = -1;
  int fd_ = -1;
};

}  // namespace cadclip::cad::prepare_detail
