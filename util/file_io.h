// Small files the node writes and reads whole: its keys and certificates,
// its genesis inputs and parameters. Writes are atomic and durable, and a
// file meant for its owner only is never readable by others, not even for
// a moment; reads are bounded, so a wrong path (a log, a database) is not
// read whole.
#ifndef RNODE_UTIL_FILE_IO_H_
#define RNODE_UTIL_FILE_IO_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rnode {

// Writes `text` to `path` with exactly `mode`: a temporary file beside it
// (path + ".tmp"; whatever was there, a symlink included, is removed
// first and never followed), created exclusively with that mode, synced,
// then renamed over `path`, and the directory synced. A crash leaves the
// old file or the whole new one. Internal naming the file on any failure
// (the temporary file is then removed).
absl::Status WriteFileAtomically(const std::string& path, std::string_view text,
                                 mode_t mode);

// The text of the regular file at `path`. NotFound when nothing is there;
// InvalidArgument when it is not a regular file or holds more than
// `max_bytes`; Internal when it cannot be read.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path,
                                          uintmax_t max_bytes);

}  // namespace rnode

#endif  // RNODE_UTIL_FILE_IO_H_
