#include "bench/checkers/synthetic_history.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <random>
#include <vector>

namespace fencecheck::bench {

SyntheticHistory write_synthetic_history(const std::string& dir, std::uint64_t events,
                                         int processes, int keys, std::uint64_t seed) {
  std::filesystem::create_directories(dir);  // throws, naming the folder, when it cannot
  std::FILE* h = std::fopen((dir + "/history.jsonl").c_str(), "w");
  std::FILE* r = std::fopen((dir + "/resource.jsonl").c_str(), "w");
  if (h == nullptr || r == nullptr) {
    if (h != nullptr) std::fclose(h);
    if (r != nullptr) std::fclose(r);
    throw std::runtime_error("cannot write the synthetic history into " + dir);
  }
  std::mt19937_64 rng(seed);
  struct Client {
    int step = 0;  // 0 acquire, 1 read, 2 write, 3 release
    int key = 0;
    std::int64_t token = 0;
  };
  std::vector<Client> clients(static_cast<std::size_t>(processes));
  std::vector<int> holder(static_cast<std::size_t>(keys), -1);
  std::vector<std::int64_t> next_token(static_cast<std::size_t>(keys), 1);
  std::vector<std::vector<std::uint64_t>> lists(static_cast<std::size_t>(keys));
  std::vector<int> generation(static_cast<std::size_t>(keys), 0);
  std::uint64_t index = 0, seq = 0, element = 0;
  std::int64_t t = 0;
  auto list_json = [&](const std::vector<std::uint64_t>& l) {
    std::string s = "[";
    for (std::size_t i = 0; i < l.size(); ++i) s += (i ? "," : "") + std::to_string(l[i]);
    return s + "]";
  };
  auto line = [&](int p, const char* type, const char* f, const std::string& key, const std::string& value) {
    std::fprintf(h, "{\"index\":%llu,\"time\":%lld,\"process\":%d,\"type\":\"%s\",\"f\":\"%s\",\"key\":\"%s\",\"value\":%s,\"node\":\"c%d\"}\n",
                 static_cast<unsigned long long>(index++), static_cast<long long>(t), p, type, f, key.c_str(),
                 value.c_str(), p % 5 + 1);
    t += 1000 + static_cast<std::int64_t>(rng() % 1000);
  };
  // A full list moves its key to a new resource key ("k3.1", "k3.2", …) so that the JSON
  // stays small while every list keeps append semantics.
  constexpr std::size_t kMaxList = 8;
  while (index + 2 <= events) {
    int p = static_cast<int>(rng() % static_cast<std::uint64_t>(processes));
    Client& c = clients[static_cast<std::size_t>(p)];
    auto k = static_cast<std::size_t>(c.key);
    std::string lock = "l" + std::to_string(c.key);
    std::string key = "k" + std::to_string(c.key) + "." + std::to_string(generation[k]);
    switch (c.step) {
      case 0: {
        c.key = static_cast<int>(rng() % static_cast<std::uint64_t>(keys));
        k = static_cast<std::size_t>(c.key);
        lock = "l" + std::to_string(c.key);
        line(p, "invoke", "acquire", lock, "null");
        if (holder[k] >= 0) {
          line(p, "fail", "acquire", lock, "null");
          break;
        }
        holder[k] = p;
        c.token = next_token[k]++;
        line(p, "ok", "acquire", lock, "{\"token\":" + std::to_string(c.token) + "}");
        c.step = 1;
        break;
      }
      case 1:
        line(p, "invoke", "read", key, "null");
        std::fprintf(r, "{\"seq\":%llu,\"time\":%lld,\"key\":\"%s\",\"op\":\"read\",\"token\":null,\"value\":%s,\"accepted\":true,\"reason\":\"\",\"client\":\"c%d\"}\n",
                     static_cast<unsigned long long>(seq++), static_cast<long long>(t), key.c_str(),
                     list_json(lists[k]).c_str(), p % 5 + 1);
        line(p, "ok", "read", key, list_json(lists[k]));
        c.step = 2;
        break;
      case 2: {
        lists[k].push_back(element++);
        std::string v = "{\"token\":" + std::to_string(c.token) + ",\"value\":" + list_json(lists[k]) + "}";
        line(p, "invoke", "write", key, v);
        std::fprintf(r, "{\"seq\":%llu,\"time\":%lld,\"key\":\"%s\",\"op\":\"write\",\"token\":%lld,\"value\":%s,\"accepted\":true,\"reason\":\"\",\"client\":\"c%d\"}\n",
                     static_cast<unsigned long long>(seq++), static_cast<long long>(t), key.c_str(),
                     static_cast<long long>(c.token), list_json(lists[k]).c_str(), p % 5 + 1);
        line(p, "ok", "write", key, v);
        c.step = 3;
        break;
      }
      case 3: {
        std::string v = "{\"token\":" + std::to_string(c.token) + "}";
        line(p, "invoke", "release", lock, v);
        holder[k] = -1;
        line(p, "ok", "release", lock, v);
        if (lists[k].size() >= kMaxList) {  // the last read of this generation is the final one
          line(p, "invoke", "read", key, "null");
          line(p, "ok", "read", key, list_json(lists[k]));
          lists[k].clear();
          ++generation[k];
        }
        c.step = 0;
        break;
      }
    }
  }
  // Final reads of every key's current list, as the runner makes once the clients stop:
  // without them the writes since a key's last read would count as lost updates.
  for (std::size_t k = 0; k < lists.size(); ++k) {
    std::string key = "k" + std::to_string(k) + "." + std::to_string(generation[k]);
    line(0, "invoke", "read", key, "null");
    line(0, "ok", "read", key, list_json(lists[k]));
  }
  std::fclose(h);
  std::fclose(r);
  return {index, seq};
}

}  // namespace fencecheck::bench
