// Test support: loads a page in headless Chromium (Debian's `chromium`) with the network
// and every background service off, a fresh profile, and returns the DOM after its script
// ran (or a screenshot). As root Chromium needs --no-sandbox.
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/report/report_fixture.h"
#include "tests/support/command.h"

namespace fencecheck::testing {

struct BrowserResult {
  int code = -1;
  std::string dom;
  std::string log;  // Chromium's stderr
  double seconds = 0;
};

// `fragment`, e.g. "#v0", is appended to the page's file: URL.
inline BrowserResult load_in_chromium(const fs::path& page, const std::string& fragment = "",
                                      const std::string& extra = "--dump-dom") {
  char tmpl[] = "/tmp/fc-chromium-XXXXXX";
  const fs::path profile = ::mkdtemp(tmpl);
  const fs::path dom = profile / "dom.html", log = profile / "chromium.log";
  const std::string cmd = "timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                          "--disable-background-networking --disable-component-update --disable-sync "
                          "--user-data-dir=" + (profile / "profile").string() + " --virtual-time-budget=5000 " + extra +
                          " 'file://" + fs::absolute(page).string() + fragment + "' >" + dom.string() + " 2>" + log.string();
  BrowserResult r;
  const auto start = std::chrono::steady_clock::now();
  r.code = run_command(cmd).code;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.dom = slurp(dom);
  r.log = slurp(log);
  std::error_code ec;
  fs::remove_all(profile, ec);
  return r;
}

// The value of attribute `name` on the first element that has it; "" if none.
inline std::string dom_attr(const std::string& dom, const std::string& name) {
  const std::string key = " " + name + "=\"";
  auto at = dom.find(key);
  if (at == std::string::npos) return "";
  at += key.size();
  return dom.substr(at, dom.find('"', at) - at);
}

}  // namespace fencecheck::testing
