// `recv COMM any` (MPI_ANY_SOURCE, mpi profile) and groups of send/recv in the mpi profile (issue 18):
// the checker tries every sender a wildcard receive can take, with and without the partial-order
// reduction, and each rule has a minimally different scenario whose verdict flips.
#include <gtest/gtest.h>

#include <string>

#include "collmc/model/source.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

using checker::SearchOptions;
using checker::StepKind;
using model::Verdict;

std::string three_ranks(const std::string& r0, const std::string& r1, const std::string& r2) {
  return "ranks 3\nset profile = mpi\ncomm W = all\nrank 0 {\n" + r0 + "\n}\nrank 1 {\n" + r1 + "\n}\nrank 2 {\n" + r2 +
         "\n}\n";
}

void expect_both_ways(const std::string& text, Verdict v) {
  SearchOptions no_reduction;
  no_reduction.reduction = false;
  EXPECT_EQ(verdict_of(text), v) << text;
  EXPECT_EQ(verdict_of(text, no_reduction), v) << text;
}

TEST(MpiWildcard, ARaceThatHangsOnlyWhenTheWildcardTakesTheOtherSender) {
  // The wildcard may take rank 2's message; then the receive from 2 never gets one.
  const std::string race = three_ranks("recv W any x\nrecv W 2 x", "send W 0 x", "send W 0 x");
  expect_both_ways(race, Verdict::Deadlock);
  auto r = check_text(race);
  bool matched_two = false;
  for (const auto& s : r.schedule)
    if (s.kind == StepKind::MatchAny && s.peer == 2) matched_two = true;
  EXPECT_TRUE(matched_two) << "the schedule must show the wildcard taking rank 2's send";
  // Two wildcard receives take both messages in either order: safe.
  expect_both_ways(three_ranks("recv W any x\nrecv W any x", "send W 0 x", "send W 0 x"), Verdict::Safe);
  // A fixed receive from 1 first leaves the wildcard only rank 2: safe.
  expect_both_ways(three_ranks("recv W 1 x\nrecv W any x", "send W 0 x", "send W 0 x"), Verdict::Safe);
}

TEST(MpiWildcard, TheMatchDependsOnWhatTheSendersDidBefore) {
  // Rank 2 sends only after rank 1's message went through rank 0: the wildcard can only take rank 1 first.
  expect_both_ways(three_ranks("recv W any x\nsend W 2 x\nrecv W 2 x", "send W 0 x", "recv W 0 x\nsend W 0 x"),
                   Verdict::Safe);
  // Rank 2 sends without waiting: if the wildcard takes rank 1, rank 0's send to 2 and rank 2's send to 0
  // wait for each other.
  expect_both_ways(three_ranks("recv W any x\nsend W 2 x\nrecv W 1 x", "send W 0 x", "send W 0 x\nrecv W 0 x"),
                   Verdict::Deadlock);
}

TEST(MpiWildcard, NoSenderIsADeadlockAndAMismatchedTypeIsAMismatch) {
  expect_both_ways(three_ranks("recv W any x", "", ""), Verdict::Deadlock);
  expect_both_ways(three_ranks("recv W any x dtype=int32", "send W 0 x dtype=float32", ""), Verdict::Mismatch);
  expect_both_ways(three_ranks("recv W any x dtype=int32", "send W 0 x dtype=int32", ""), Verdict::Safe);
}

TEST(MpiWildcard, OnlyInTheMpiProfileAndOnlyForRecv) {
  EXPECT_THROW(world_from("ranks 2\ncomm W = all\nrank 0 {\nrecv W any x\n}\n"), model::InputError);
  EXPECT_THROW(world_from("ranks 2\nset profile = mpi\ncomm W = all\nrank 0 {\nsend W any x\n}\n"), model::InputError);
  EXPECT_NO_THROW(world_from("ranks 2\nset profile = mpi\ncomm W = all\nrank 0 {\nrecv W any x\n}\n"));
}

// Tags (issue 26, MPI 4.1 sec. 3.2.4 and 3.5): each verdict flips with one tag.
TEST(MpiTags, AReceiveTakesOnlyItsTagAndAnyTagTakesEach) {
  expect_both_ways(three_ranks("recv W 1 x tag=1", "send W 0 x tag=1", ""), Verdict::Safe);
  expect_both_ways(three_ranks("recv W 1 x tag=1", "send W 0 x tag=2", ""), Verdict::Deadlock);
  expect_both_ways(three_ranks("recv W 1 x tag=any", "send W 0 x tag=2", ""), Verdict::Safe);
  // MPI_ANY_TAG first may take the only tag-1 message; the tag-1 receive first cannot take the tag-2 one.
  expect_both_ways(three_ranks("recv W any x tag=any\nrecv W any x tag=1", "send W 0 x tag=1", "send W 0 x tag=2"),
                   Verdict::Deadlock);
  expect_both_ways(three_ranks("recv W any x tag=1\nrecv W any x tag=any", "send W 0 x tag=1", "send W 0 x tag=2"),
                   Verdict::Safe);
  // The schedule of the deadlock shows MPI_ANY_TAG taking rank 1's tag-1 send.
  auto r = check_text(three_ranks("recv W any x tag=any\nrecv W any x tag=1", "send W 0 x tag=1", "send W 0 x tag=2"));
  bool took_tag_one = false;
  for (const auto& s : r.schedule)
    if (s.kind == StepKind::MatchAny && s.peer == 1 && s.step.tag == 1) took_tag_one = true;
  EXPECT_TRUE(took_tag_one);
}

TEST(MpiTags, MessagesOfOneTagStayInOrderOthersMayOvertake) {
  // Posted together, tag 2 may be received before tag 1.
  expect_both_ways(
      three_ranks("group {\nsend W 1 a tag=1\nsend W 1 b tag=2\n}", "recv W 0 b tag=2\nrecv W 0 a tag=1", ""),
      Verdict::Safe);
  // Two messages of one tag: the first receive takes the first (counts differ: a mismatch when crossed).
  expect_both_ways(three_ranks("group {\nsend W 1 a count=1 tag=3\nsend W 1 b count=2 tag=3\n}",
                               "recv W 0 b count=2 tag=3\nrecv W 0 a count=1 tag=3", ""),
                   Verdict::Mismatch);
  // A specific receive posted behind a wildcard of another tag does not wait behind it.
  expect_both_ways(
      three_ranks("group {\nrecv W any x tag=1\nrecv W 2 x tag=0\n}", "send W 0 x tag=1", "send W 0 x tag=0"),
      Verdict::Safe);
}

TEST(MpiProbe, WaitsForAPendingMessageAndReceivesNothing) {
  // A probe returns once a matching message is sent; the receive still takes it.
  expect_both_ways(three_ranks("probe W 1\nrecv W 1 x", "send W 0 x", ""), Verdict::Safe);
  // Both probe first: nothing is sent.
  expect_both_ways(three_ranks("probe W 1\nsend W 1 x", "probe W 0\nrecv W 0 x", ""), Verdict::Deadlock);
  // A probe does not take the message: a second probe finds it again, and one receive takes it.
  expect_both_ways(three_ranks("probe W any\nprobe W 1 tag=any\nrecv W 1 x", "send W 0 x", ""), Verdict::Safe);
  // A probe for a message already received waits for ever.
  expect_both_ways(three_ranks("recv W 1 x\nprobe W 1", "send W 0 x", ""), Verdict::Deadlock);
  // Tags: a probe of tag 2 does not see a tag-1 message.
  expect_both_ways(three_ranks("probe W any tag=2\nrecv W 1 x tag=1", "send W 0 x tag=1", ""), Verdict::Deadlock);
}

TEST(MpiTags, TagsAndProbeOnlyInTheMpiProfile) {
  // NCCL has no tags and no probe; a send's tag is never `any`; a probe blocks, so it is no group member.
  EXPECT_THROW(world_from("ranks 2\ncomm W = all\nrank 0 {\nsend W 1 x tag=1\n}\n"), model::InputError);
  EXPECT_THROW(world_from("ranks 2\ncomm W = all\nrank 0 {\nprobe W 1\n}\n"), model::InputError);
  EXPECT_THROW(world_from("ranks 2\nset profile = mpi\ncomm W = all\nrank 0 {\nsend W 1 x tag=any\n}\n"),
               model::InputError);
  EXPECT_THROW(world_from("ranks 2\nset profile = mpi\ncomm W = all\nrank 0 {\ngroup {\nprobe W 1\n}\n}\n"),
               model::InputError);
  EXPECT_THROW(world_from("ranks 2\nset profile = mpi\ncomm W = all\nrank 0 {\nprobe W 1 x\n}\n"), model::InputError);
  // The error names the line and column of the tag.
  try {
    world_from("ranks 2\ncomm W = all\nrank 0 {\nrecv W 1 x tag=4\n}\n");
    ADD_FAILURE() << "tag= in the nccl profile was accepted";
  } catch (const model::InputError& e) {
    EXPECT_NE(std::string(e.what()).find(":4:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("profile = mpi"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(world_from(three_ranks("probe W any tag=any\nrecv W any x tag=any", "send W 0 x tag=5", "")));
}

TEST(MpiGroups, SendAndRecvPostedTogetherAsMpiSendrecv) {
  // Both ranks send first with synchronous sends: a deadlock. Posted together (MPI_Sendrecv, or
  // Isend/Irecv and Waitall): safe.
  const std::string both_send_first =
      "ranks 2\nset profile = mpi\ncomm W = all\nrank 0 {\nsend W 1 x\nrecv W 1 x\n}\nrank 1 {\nsend W 0 x\nrecv W 0 "
      "x\n}\n";
  expect_both_ways(both_send_first, Verdict::Deadlock);
  const std::string grouped =
      "ranks 2\nset profile = mpi\ncomm W = all\nrank 0 {\ngroup {\nsend W 1 x\nrecv W 1 x\n}\n}\nrank 1 {\ngroup "
      "{\nsend W 0 x\nrecv W 0 x\n}\n}\n";
  expect_both_ways(grouped, Verdict::Safe);
  // In the nccl profile, send/recv in a group are device operations, as before: the group is accepted.
  EXPECT_NO_THROW(world_from("ranks 2\ncomm W = all\nrank 0 {\ngroup {\nsend W 1 x\n}\n}\n"));
}

}  // namespace
}  // namespace collmc::testing
