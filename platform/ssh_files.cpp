#include "platform/ssh_files.h"

#include <fstream>
#include <sstream>

#include "platform/errors.h"
#include "platform/os_util.h"

namespace fencecheck {

namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

using Stamp = std::pair<std::uintmax_t, fs::file_time_type>;

Stamp stamp_of(const fs::path& p, std::error_code& ec) { return {fs::file_size(p, ec), fs::last_write_time(p, ec)}; }

}  // namespace

void SshFiles::share(const fs::path& path, bool writable) {
  fs::path p = fs::absolute(path).lexically_normal();
  shares_.push_back({p, writable, "s" + std::to_string(shares_.size()) + "/" + p.filename().string()});
}

void SshFiles::add_local_log(const fs::path& path) {
  std::lock_guard lock(mu_);
  logs_.insert(fs::absolute(path).lexically_normal());
}

const SshFiles::Share* SshFiles::share_of(const fs::path& p) const {
  const std::string s = p.string();
  for (const auto& share : shares_) {
    const std::string root = share.local.string();
    if (s == root || (s.size() > root.size() && s.compare(0, root.size(), root) == 0 && s[root.size()] == '/')) {
      return &share;
    }
  }
  return nullptr;
}

std::string SshFiles::translate(const SshNode& node, const std::string& text, std::vector<fs::path>* used) const {
  std::string out = text;
  for (const auto& share : shares_) {
    const std::string from = share.local.string();
    const std::string to = node.root + "/" + share.remote;
    for (std::size_t at = out.find(from); at != std::string::npos; at = out.find(from, at + to.size())) {
      const std::size_t end = at + from.size();
      if (end < out.size() && out[end] != '/' && out[end] != ':' && out[end] != '\n' && out[end] != ' ') continue;
      if (used != nullptr) {
        std::size_t stop = out.find_first_of(": \n\"'", end);
        used->push_back(fs::path(out.substr(at, stop == std::string::npos ? std::string::npos : stop - at)));
      }
      out.replace(at, from.size(), to);
    }
  }
  return out;
}

void SshFiles::upload(SshNode& node, const fs::path& local, const Deadline& deadline) {
  const Share* share = share_of(local);
  if (share == nullptr) return;
  auto make_dir = [&](const fs::path& dir) {
    const std::string remote_dir = translate(node, dir.string(), nullptr);
    if (node.made.contains(remote_dir)) return;
    node.conn->check("mkdir -p " + shell_quote(remote_dir), "creating a directory", "", deadline, Retry::kIdempotent);
    node.made.insert(remote_dir);
  };
  std::error_code ec;
  if (fs::is_regular_file(local, ec)) {
    upload_file(node, local, *share, deadline);
  } else if (fs::is_directory(local, ec)) {
    make_dir(local);
    for (const auto& entry : fs::recursive_directory_iterator(local, ec)) {
      if (entry.is_directory()) {
        make_dir(entry.path());
      } else if (entry.is_regular_file()) {
        upload_file(node, entry.path(), *share, deadline);
      }
    }
  } else {
    make_dir(local.parent_path());
  }
}

void SshFiles::upload_programs(SshNode& node, const Deadline& deadline) {
  for (const auto& share : shares_) {
    std::error_code ec;
    if (!share.writable && fs::is_regular_file(share.local, ec)) upload_file(node, share.local, share, deadline);
  }
}

void SshFiles::upload_file(SshNode& node, const fs::path& local, const Share& share, const Deadline& deadline) {
  {
    std::lock_guard lock(mu_);
    if (logs_.contains(local)) return;  // a log streams back; the host never needs it
  }
  std::error_code ec;
  const Stamp stamp = stamp_of(local, ec);
  if (ec) return;
  if (auto it = node.sent.find(local.string()); it != node.sent.end() && it->second == stamp) return;
  std::string content = read_all(local);
  // A config written for the node names shared paths (redis's dir, zoo.cfg's dataDir):
  // they are rewritten like argv. Binaries (the read-only shares) are sent as they are.
  if (share.writable && content.find('\0') == std::string::npos) content = translate(node, content, nullptr);
  const std::string target = translate(node, local.string(), nullptr);
  const std::string mode = (fs::status(local, ec).permissions() & fs::perms::owner_exec) != fs::perms::none ? "755" : "644";
  // $$ is the remote shell's pid: every attempt writes a name of its own, so an attempt
  // that outlived its ssh client can never leave half a file where the next one renames.
  const std::string temporary = shell_quote(target) + ".up.$$";
  node.conn->check("mkdir -p " + shell_quote(fs::path(target).parent_path().string()) + " && cat > " + temporary +
                       " && chmod " + mode + " " + temporary + " && mv " + temporary + " " + shell_quote(target),
                   "uploading " + local.string(), content, deadline, Retry::kIdempotent);
  node.sent[local.string()] = stamp;
}

void SshFiles::write_in_place(SshNode& node, const fs::path& path, std::size_t bytes, const Deadline& deadline) {
  std::lock_guard order(node.mu);
  auto it = node.sent.find(path.string());
  if (it == node.sent.end()) return;  // a process started there later gets it whole
  const std::string content = read_all(path).substr(0, bytes);
  // `dd conv=notrunc`: the same inode, which the processes that mapped it keep. The same
  // bytes written twice are the same bytes: idempotent.
  node.conn->check("dd of=" + shell_quote(translate(node, path.string(), nullptr)) + " bs=" + std::to_string(bytes) +
                       " count=1 iflag=fullblock conv=notrunc status=none",
                   "writing " + path.string() + " in place", content, deadline, Retry::kIdempotent);
  std::error_code ec;
  it->second = stamp_of(path, ec);
}

std::string SshFiles::fetch_command(const SshNode& node) const {
  std::string dirs;
  for (const auto& share : shares_) {
    if (share.writable) dirs += " " + shell_quote(share.remote);
  }
  if (dirs.empty()) return "true";
  // In a subshell: the script's own shell must not stand in the run's directory, where a
  // removal that follows would take it for one of the run's processes.
  return "( cd " + shell_quote(node.root) + " 2>/dev/null && find" + dirs +
         " -type f \\( -name '*.log' -o -name '*.jsonl' -o -name '*.json' \\) -print0 2>/dev/null | "
         "tar --null -T - -cf - 2>/dev/null )";
}

// Each share's members are "s<i>/<name>/…" in the stream: unpacked below the share's own
// directory, two components stripped.
void SshFiles::unpack(const SshNode& node, const std::string& tar, const Deadline& deadline) const {
  if (tar.empty()) return;
  for (const auto& share : shares_) {
    if (!share.writable) continue;
    auto x = os::run_command({"tar", "--skip-old-files", "-xf", "-", "-C", share.local.string(), "--strip-components=2",
                              "--wildcards", share.remote + "/*"},
                             tar, deadline);
    // tar says "Not found in archive" when the share had nothing to bring back: not an error.
    if (x.status != 0 && x.output.find("Not found in archive") == std::string::npos) {
      throw HarnessError("unpacking the files of " + node.root + "/" + share.remote + ": " + x.output);
    }
  }
}

}  // namespace fencecheck
