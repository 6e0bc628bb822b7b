// The HTTP request and response as route handlers see them: plain values, no Beast types,
// so handlers and dialects can be written and tested without the network.
//
// A response is either a whole body (`body`) or a stream (`stream`): for a stream the server
// sends the status and headers with chunked transfer encoding, then calls the producer on a
// handler thread, which writes pieces (SSE events, NDJSON lines) through a StreamWriter.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cohort::api {

struct HttpHeader {
  std::string name;
  std::string value;
};

struct HttpRequest {
  std::string method;               // as sent, e.g. "GET", "POST" (methods are case-sensitive)
  std::string target;               // the raw request-target, query string included
  std::string path;                 // target without the query string; routing uses this alone
  std::string query;                // what follows '?', without it; empty when absent
  std::vector<HttpHeader> headers;  // in arrival order; names lower-cased
  std::string body;

  // The first header called `name` (any case), or nullopt. The view lives as long as *this.
  std::optional<std::string_view> header(std::string_view name) const;
};

// Writes the pieces of a streamed body. Used by one producer thread at a time.
class StreamWriter {
 public:
  virtual ~StreamWriter() = default;
  // Sends `data` as one chunk, flushed to the socket before it returns (empty data is
  // skipped). Returns false once the client has gone, a write timed out or the server is
  // stopping: the producer should then stop generating (freeing its slot) and return.
  virtual bool write(std::string_view data) = 0;
};

// Produces a streamed body. Runs on a handler thread; may block between writes.
using StreamProducer = std::function<void(StreamWriter&)>;

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  // Extra headers (Retry-After, Cache-Control...). The server adds Content-Length or
  // Transfer-Encoding, Connection and the CORS headers itself.
  std::vector<HttpHeader> headers;
  std::string body;  // ignored when `stream` is set
  StreamProducer stream;

  // Replaces any header of that name (any case), or adds it.
  void set_header(std::string name, std::string value);
  // The first header called `name` (any case), or nullopt.
  std::optional<std::string_view> header(std::string_view name) const;
};

// A response with a plain-text body.
HttpResponse text_response(int status, std::string body,
                           std::string content_type = "text/plain; charset=utf-8");

// ASCII case-insensitive equality, for header names and auth schemes.
bool iequals(std::string_view a, std::string_view b);

}  // namespace cohort::api
