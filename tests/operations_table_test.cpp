// The one list of operations (model/operations.def) and what it feeds: the model's keywords, forms and
// classes, the trace call kinds, and the names the recorder writes and its reader maps back.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "collmc/model/operations.h"
#include "collmc/model/parser.h"
#include "collmc/traces/trace.h"

namespace collmc::testing {
namespace {

using model::OpClass;
using model::OpForm;
using model::OpKind;
using model::Profile;

TEST(OperationsTable, EveryKeywordParsesBackToItsOperation) {
  for (const model::OpInfo& op : model::kOperations) {
    if (op.keyword == "sync") continue;  // two forms, told apart by the argument
    ASSERT_TRUE(model::op_from_keyword(op.keyword).has_value()) << op.keyword;
    EXPECT_EQ(*model::op_from_keyword(op.keyword), op.kind) << op.keyword;
  }
  EXPECT_FALSE(model::op_from_keyword("sync").has_value());
  EXPECT_FALSE(model::op_from_keyword("no_such_call").has_value());
}

TEST(OperationsTable, NamesAreUniquePerLibrary) {
  std::set<std::string_view> nccl, mpi;
  for (const model::OpInfo& op : model::kOperations) {
    if (!op.nccl_name.empty()) {
      EXPECT_TRUE(nccl.insert(op.nccl_name).second) << op.nccl_name;
    }
    if (!op.mpi_name.empty()) {
      EXPECT_TRUE(mpi.insert(op.mpi_name).second) << op.mpi_name;
    }
  }
}

// SEMANTICS.md §2 and §6, row by row where the two profiles differ.
TEST(OperationsTable, ClassesPerProfileAreTheSpecs) {
  EXPECT_EQ(model::op_class(OpKind::Register, Profile::Nccl), OpClass::HostBlocking);
  EXPECT_EQ(model::op_class(OpKind::Deregister, Profile::Nccl), OpClass::Local);
  EXPECT_EQ(model::op_class(OpKind::Deregister, Profile::Mpi), OpClass::HostBlocking);
  EXPECT_EQ(model::op_class(OpKind::AllReduce, Profile::Nccl), OpClass::StreamOrdered);
  EXPECT_EQ(model::op_class(OpKind::AllReduce, Profile::Mpi), OpClass::HostBlocking);
  EXPECT_EQ(model::op_class(OpKind::Send, Profile::Mpi), OpClass::HostPair);
  EXPECT_EQ(model::op_class(OpKind::Barrier, Profile::Nccl), OpClass::StreamThenSync);
  EXPECT_EQ(model::op_class(OpKind::CudaFree, Profile::Nccl), OpClass::LocalAfterSync);
  EXPECT_EQ(model::op_class(OpKind::Destroy, Profile::Mpi), OpClass::Local);
  EXPECT_EQ(model::op_class(OpKind::SyncDevice, Profile::Nccl), OpClass::DeviceSync);
}

TEST(OperationsTable, FormsAndArguments) {
  EXPECT_TRUE(model::is_collective(OpKind::AllToAll));
  EXPECT_FALSE(model::is_collective(OpKind::Barrier));
  EXPECT_TRUE(model::is_p2p(OpKind::Recv));
  EXPECT_TRUE(model::symmetric_eligible(OpKind::ReduceScatter));
  EXPECT_FALSE(model::symmetric_eligible(OpKind::Broadcast));
  EXPECT_TRUE(model::takes_root(OpKind::Reduce));
  EXPECT_TRUE(model::takes_redop(OpKind::Reduce));
  EXPECT_FALSE(model::takes_redop(OpKind::AllGather));
  EXPECT_EQ(model::op_form(OpKind::Split), OpForm::Split);
}

TEST(OperationsTable, TraceCallKindsFollowTheTable) {
  for (const model::OpInfo& op : model::kOperations) {
    const traces::CallKind kind = traces::call_kind_of(op.kind);
    ASSERT_TRUE(traces::op_kind_of(kind).has_value());
    EXPECT_EQ(*traces::op_kind_of(kind), op.kind);
    if (op.form != OpForm::SyncDevice) {
      EXPECT_EQ(std::string(traces::call_kind_name(kind)), op.keyword);
    }
  }
  EXPECT_EQ(traces::call_kind_of(OpKind::Init), traces::CallKind::CommInit);
  EXPECT_EQ(traces::call_kind_of(OpKind::Alloc), traces::CallKind::MemAlloc);
  EXPECT_EQ(std::string(traces::call_kind_name(traces::CallKind::DeviceSync)), "sync device");
  EXPECT_FALSE(traces::op_kind_of(traces::CallKind::GroupStart).has_value());
  EXPECT_FALSE(traces::op_kind_of(traces::CallKind::Other).has_value());
}

TEST(OperationsTable, UnknownStatementErrorListsEveryKeyword) {
  try {
    model::parse_string("ranks 1\nrank 0 {\n  frobnicate x\n}\n", "t.cmc");
    FAIL() << "parsed";
  } catch (const model::InputError& e) {
    const std::string what = e.what();
    for (const model::OpInfo& op : model::kOperations)
      EXPECT_NE(what.find(op.keyword), std::string::npos) << op.keyword;
    EXPECT_NE(what.find("t.cmc:3:3"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace collmc::testing
