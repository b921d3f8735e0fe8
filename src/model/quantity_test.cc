#include "model/quantity.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

int64_t Q(const char* s, bool milli) {
  auto r = ParseQuantity(s, milli);
  EXPECT_TRUE(r.ok()) << s << ": " << r.status();
  return r.ok() ? *r : -999;
}

TEST(QuantityTest, CpuInMillicores) {
  EXPECT_EQ(Q("500m", true), 500);
  EXPECT_EQ(Q("4", true), 4000);
  EXPECT_EQ(Q("1.5", true), 1500);
  EXPECT_EQ(Q("0.1", true), 100);
  EXPECT_EQ(Q("2e3", true), 2000000);
}

TEST(QuantityTest, MemoryInBytes) {
  EXPECT_EQ(Q("80Gi", false), 80LL << 30);
  EXPECT_EQ(Q("4Ti", false), 4LL << 40);
  EXPECT_EQ(Q("1k", false), 1000);
  EXPECT_EQ(Q("128974848", false), 128974848);
  EXPECT_EQ(Q("129M", false), 129000000);
  EXPECT_EQ(Q("1.5Gi", false), 3LL << 29);
}

TEST(QuantityTest, FractionsRoundUpForWholeUnits) {
  EXPECT_EQ(Q("500m", false), 1);
  EXPECT_EQ(Q("0.1", false), 1);
}

TEST(QuantityTest, NegativeParsesForCallersToReject) { EXPECT_EQ(Q("-2", false), -2); }

TEST(QuantityTest, RejectsGarbage) {
  for (const char* bad :
       {"", "abc", "1.2.3", "5Xi", "12 GB", "1e", "1e999", "99999999999999Ei", "--1", "."}) {
    EXPECT_FALSE(ParseQuantity(bad, false).ok()) << bad;
  }
}

}  // namespace
}  // namespace tessera
