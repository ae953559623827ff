// SPDX-License-Identifier: Apache-2.0
#pragma once
// Output files are all or none: every file is written to a unique temporary beside its target, and
// the temporaries are renamed into place only once all were written, so a failed run never leaves a
// partial file, nor some files of a run and not others, where a script or a browser would read it.
// A target that exists and is not a regular file (a FIFO, /dev/stdout, a terminal) is written in
// place, never replaced; a symlink is followed, so its target is replaced and the link stays.

#include <fstream>
#include <span>
#include <string>
#include <string_view>

namespace ppsim {

// An output too large to hold in memory, written as it is made: into a unique temporary beside its
// target (for a FIFO or a device, in the system's temporary directory), which write_files_atomically
// renames into place (or copies, for those) with the other files. An unwritable target is refused
// when the spool is made, before any work; the temporary is removed unless it was committed.
class SpooledFile {
 public:
  SpooledFile(std::string path, std::string flag);
  ~SpooledFile();
  SpooledFile(const SpooledFile&) = delete;
  SpooledFile& operator=(const SpooledFile&) = delete;
  std::ostream& stream() { return stream_; }

  // For write_files_atomically: ends the writing (false when a write failed), the temporary's
  // path, and forgetting it once it has been renamed onto the target.
  bool close() {
    if (stream_.is_open()) stream_.close();
    return static_cast<bool>(stream_);
  }
  const std::string& temporary() const { return temporary_; }
  void committed();

 private:
  std::string path_;
  std::string flag_;
  std::string temporary_;
  std::ofstream stream_;
};

// Output that waits on disk to be printed, too large to wait in memory (a streamed JSON timeline):
// a temporary in the system's temporary directory, written through stream(), copied out, removed.
class ScratchFile {
 public:
  ScratchFile();
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  std::ostream& stream() { return stream_; }
  // Ends the writing; throws InputError naming TMPDIR when a write failed. Called before anything
  // else is committed, so a failed report leaves no file either.
  void finish();
  void copy_to(std::ostream& out);  // finishes first; InputError naming TMPDIR when the temporary fails

 private:
  std::string directory_;
  std::string path_;
  std::ofstream stream_;
};

struct OutputFile {
  std::string path;
  std::string text;
  std::string flag;  // names the file in the error
  SpooledFile* spooled = nullptr;  // the contents are there instead of in `text`
};

// Writes every file, or none; throws InputError("<flag>: cannot write <path>: <reason>") on failure
// (a full disk, ENOSPC, among them: exit status 2). SIGINT, SIGTERM and SIGHUP wait while the files
// are renamed into place.
void write_files_atomically(std::span<const OutputFile> files);

// InputError when two of `files` (their paths only are read) are one file by any spelling: the
// second would silently replace the first.
void refuse_shared_targets(std::span<const OutputFile> files);

// What write_files_atomically would refuse before any work is done: an empty path, a directory, a
// symlink loop, a missing or unwritable directory. For runs that take minutes (ppsim-calibrate).
void check_output_target(const std::string& path, std::string_view flag);

// The executables call this once: SIGINT, SIGTERM or SIGHUP then removes every temporary file still
// open (a streamed --trace, a spool) before the signal ends the process. The Python module does
// not: Python owns its signal handlers, and its temporaries go with their objects.
void remove_temporaries_on_signals();

// One file, the same way.
void write_file_atomically(const std::string& path, const std::string& text, std::string_view flag);

}  // namespace ppsim
