// Collective probes and the ranks' lockstep on torch: with a fake group of threads (the logic every
// backend shares, NCCL's included), and with the real gloo group, its ranks as threads of this process.
#include <gtest/gtest.h>

#include <barrier>
#include <filesystem>
#include <thread>

#include "probe/probe.h"
#include "ranks/collective_step.h"
#include "ranks/rank_group.h"

namespace repro_audit {
namespace {

// W ranks as threads sharing one board: each collective posts, meets the others, reads, meets again.
// Sums run in rank order, so the expected results are easy to write down.
struct Board {
  explicit Board(int size) : meeting(size), slots(static_cast<std::size_t>(size)) {}
  std::barrier<> meeting;
  std::vector<at::Tensor> slots;
};

class FakeGroup : public RankGroup {
 public:
  FakeGroup(Board& board, int rank) : board_(board), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(board_.slots.size()); }
  at::Device device() const override { return at::kCPU; }
  void all_reduce_sum(at::Tensor& tensor) override { tensor.copy_(sum_of(tensor)); }
  void reduce_scatter_sum(at::Tensor& output, const at::Tensor& input) override {
    output.copy_(sum_of(input).chunk(size())[rank_]);
  }
  void all_gather(std::vector<at::Tensor>& outputs, const at::Tensor& input) override {
    post(input);
    for (int r = 0; r < size(); ++r) outputs[static_cast<std::size_t>(r)].copy_(slot(r));
    board_.meeting.arrive_and_wait();
  }
  void broadcast(at::Tensor& tensor, int root) override {
    post(tensor);
    tensor.copy_(slot(root));
    board_.meeting.arrive_and_wait();
  }

 private:
  void post(const at::Tensor& tensor) {
    board_.slots[static_cast<std::size_t>(rank_)] = tensor.clone();
    board_.meeting.arrive_and_wait();
  }
  const at::Tensor& slot(int rank) const { return board_.slots[static_cast<std::size_t>(rank)]; }
  at::Tensor sum_of(const at::Tensor& tensor) {
    post(tensor);
    auto sum = slot(0).clone();
    for (int r = 1; r < size(); ++r) sum.add_(slot(r));
    board_.meeting.arrive_and_wait();
    return sum;
  }
  Board& board_;
  int rank_;
};

const ProbeDefinition& registered(const std::string& name) {
  const auto* probe = find_registered_probe(name);
  if (!probe) throw std::runtime_error("no probe " + name);
  return *probe;
}

// Each rank's outputs of `runs` runs of the probe's variant, rank 0 leading.
std::vector<std::vector<Outputs>> run_ranks(const std::function<std::unique_ptr<RankGroup>(int rank)>& make_group,
                                            int size, const std::string& probe, const std::string& variant, int runs) {
  std::vector<std::vector<Outputs>> seen(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<std::size_t>(size));
  for (int rank = 0; rank < size; ++rank)
    threads.emplace_back([&, rank] {
      try {
        const auto group = make_group(rank);
        const auto& definition = registered(probe);
        ProbeContext context(at::kCPU, 0, *definition.info.find_variant(variant));
        context.set_group(group.get());
        const auto run = definition.prepare(context);
        auto& mine = seen[static_cast<std::size_t>(rank)];
        if (rank == 0) {
          for (int i = 0; i < runs; ++i) mine.push_back(lead_run(*group, run));
          end_runs(*group);
        } else {
          while (follow_run(*group, [&] {
            auto outputs = run();
            mine.push_back(outputs);
            return outputs;
          })) {
          }
        }
      } catch (const std::exception& error) {
        errors[static_cast<std::size_t>(rank)] = error.what();
      }
    });
  for (auto& thread : threads) thread.join();
  for (int rank = 0; rank < size; ++rank) EXPECT_EQ(errors[static_cast<std::size_t>(rank)], "") << "rank " << rank;
  return seen;
}

std::vector<std::vector<Outputs>> run_fake(int size, const std::string& probe, const std::string& variant, int runs) {
  Board board(size);
  return run_ranks([&](int rank) { return std::make_unique<FakeGroup>(board, rank); }, size, probe, variant, runs);
}

// The probe's own result without ranks: every contribution summed in order in one process.
at::Tensor alone(const std::string& probe, const std::string& variant) {
  const auto& definition = registered(probe);
  ProbeContext context(at::kCPU, 0, *definition.info.find_variant(variant));
  return definition.prepare(context)().front().second;
}

TEST(CollectiveSteps, RankZeroLeadsEveryRunAndTheOthersStopWhenToldCarryingEveryRanksDigest) {
  const auto seen = run_fake(3, "all_reduce", "f32", 4);
  ASSERT_EQ(seen.size(), 3u);
  ASSERT_EQ(seen[0].size(), 4u);
  EXPECT_EQ(seen[1].size(), 4u);  // the followers ran exactly the runs rank 0 led
  EXPECT_EQ(seen[2].size(), 4u);
  const auto& outputs = seen[0][0];
  ASSERT_EQ(outputs.size(), 4u);  // the result, then rank 0..2's digests
  EXPECT_EQ(outputs[0].first, "result");
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(outputs[static_cast<std::size_t>(rank) + 1].first, rank_output_name(rank));
    EXPECT_TRUE(outputs[static_cast<std::size_t>(rank) + 1].second.equal(outputs[1].second)) << rank;
    EXPECT_TRUE(seen[static_cast<std::size_t>(rank)].back()[0].second.equal(outputs[0].second)) << rank;
  }
}

TEST(CollectiveProbes, EachRankSumsItsShareThenTheGroupSumsTheRanks) {
  // Rank r of 3 holds contributions [8r, 8r+8): ((c0+..+c7) + (c8+..+c15)) + (c16+..+c23) with the fake.
  const auto& definition = registered("all_reduce");
  ProbeContext context(at::kCPU, 0, *definition.info.find_variant("f32"));
  definition.prepare(context);
  const auto contributions = context.named_inputs().at(0).second;
  std::vector<at::Tensor> shares;
  for (int r = 0; r < 3; ++r) {
    auto share = contributions[8 * r].clone();
    for (int i = 8 * r + 1; i < 8 * r + 8; ++i) share.add_(contributions[i]);
    shares.push_back(share);
  }
  const auto expected = (shares[0] + shares[1]) + shares[2];
  const auto seen = run_fake(3, "all_reduce", "f32", 1);
  EXPECT_TRUE(seen[0][0][0].second.equal(expected));
  // One process alone sums all 24 in order: other bits, the effect the world size has.
  EXPECT_FALSE(alone("all_reduce", "f32").equal(expected));
}

TEST(CollectiveProbes, ReduceScatterAllGatherAndBucketsGiveEveryRankTheWholeResult) {
  for (const auto& [probe, variant] : std::vector<std::pair<std::string, std::string>>{
           {"reduce_scatter", "f32"}, {"all_gather", "f32"}, {"ddp_buckets", "f32"}}) {
    const auto seen = run_fake(4, probe, variant, 2);
    const auto& result = seen[0][0][0].second;
    EXPECT_EQ(result.numel(), alone(probe, variant).numel()) << probe;
    for (std::size_t rank = 1; rank < 4; ++rank) EXPECT_TRUE(seen[rank][0][0].second.equal(result)) << probe;
    if (probe == "all_gather") EXPECT_TRUE(result.equal(alone(probe, variant)));  // a copy is exact
  }
  // 8400 elements do not split into 9 blocks: the cell is unsupported, not wrong.
  Board board(1);
  struct Nine : FakeGroup {
    using FakeGroup::FakeGroup;
    int size() const override { return 9; }
  } group(board, 0);
  const auto& definition = registered("reduce_scatter");
  ProbeContext context(at::kCPU, 0, *definition.info.find_variant("f32"));
  context.set_group(&group);
  EXPECT_THROW(definition.prepare(context), Unsupported);
}

TEST(CollectiveGloo, RealGlooRanksGatherExactlyAndInStep) {
  if (collective_backend("cpu").empty()) GTEST_SKIP() << "this build has no gloo";
  const auto folder = std::filesystem::temp_directory_path() / ("repro-audit-gloo-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  const auto store = (folder / "store").string();
  const auto seen = run_ranks(
      [&](int rank) {
        return make_rank_group({rank, 3, store, std::chrono::milliseconds(20000), at::kCPU});
      },
      3, "all_gather", "f32", 3);
  ASSERT_EQ(seen[0].size(), 3u);
  EXPECT_TRUE(seen[0][0][0].second.equal(alone("all_gather", "f32")));
  for (std::size_t rank = 1; rank < 3; ++rank) EXPECT_EQ(seen[rank].size(), 3u);
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace repro_audit
