// The files of an ssh run's nodes: which controller paths the nodes use (shares), where each
// node's host keeps its copy (kRemoteBase/<run>/<node>/s<i>/…), sending a file there when a
// process needs it, writing a changed file in place, and bringing back what the processes
// wrote. Internal to platform/ (the ssh runtime's).
//
// Blocking: every remote step is one ssh command by the caller's deadline. Uploads are
// idempotent — each attempt writes a temporary name of its own on the host, then renames —
// so a transport failure is retried, and two attempts can never race on one file.
// Thread-safe: share() before any other call; the rest may come from several threads, one
// per node at a time for a node's SshNode (its mutex).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "platform/deadline.h"
#include "platform/ssh_remote.h"

namespace fencecheck {

// One node's host and what it holds of the run.
struct SshNode {
  std::unique_ptr<SshHostConnection> conn;
  std::string root;  // kRemoteBase/<run>/<node>
  std::mutex mu;     // sent, made, and the order of this node's spawns
  std::map<std::string, std::pair<std::uintmax_t, std::filesystem::file_time_type>> sent;  // path → what was sent
  std::set<std::string> made;  // directories made on the host (a restart makes none again)
};

class SshFiles {
 public:
  // Makes path (a directory or a file of the controller) visible to every node under the
  // same name rewritten (translate()); writable shares are fetched back by fetch().
  void share(const std::filesystem::path& path, bool writable);
  // A file the controller itself writes as a process's output (a log): never uploaded.
  void add_local_log(const std::filesystem::path& path);

  // text with every shared path rewritten to where node's host has it; each path found is
  // added to used (when not null).
  std::string translate(const SshNode& node, const std::string& text, std::vector<std::filesystem::path>* used) const;
  // Sends local (a shared file, or a shared directory's files and subdirectories) unless
  // the host has this version already. Throws HarnessError when the host does not take it.
  void upload(SshNode& node, const std::filesystem::path& local, const Deadline& deadline);
  // Sends every read-only shared file (the programs every node may run).
  void upload_programs(SshNode& node, const Deadline& deadline);
  // The host's copy of path, changed in place (the same inode, which the processes that
  // mapped it keep) to the controller's first `bytes` bytes; a host that never got the
  // file is skipped. Throws HarnessError when the host does not take it.
  void write_in_place(SshNode& node, const std::filesystem::path& path, std::size_t bytes, const Deadline& deadline);
  // The host-side half of bringing back what the host's processes wrote under the
  // writable shares (logs, JSON lines): a shell command writing them to stdout as one tar
  // stream, to run first in a script whose output is that stream.
  std::string fetch_command(const SshNode& node) const;
  // The controller's half: unpacks that stream into each writable share; a file the
  // controller has already (a config it wrote, a log streamed back) is kept. Throws
  // HarnessError when it cannot.
  void unpack(const SshNode& node, const std::string& tar, const Deadline& deadline) const;

 private:
  struct Share {
    std::filesystem::path local;
    bool writable;
    std::string remote;  // relative to the node's root
  };
  const Share* share_of(const std::filesystem::path& p) const;
  void upload_file(SshNode& node, const std::filesystem::path& local, const Share& share, const Deadline& deadline);

  std::vector<Share> shares_;
  mutable std::mutex mu_;  // logs_
  std::set<std::filesystem::path> logs_;
};

}  // namespace fencecheck
