// Text from the input on its way out: to a terminal (printable.h TerminalText) and into JSON
// (json_text.h DumpJson). Issue 31, classes 1 and 2.
#include <gtest/gtest.h>

#include <string>

#include "model/json_text.h"
#include "model/printable.h"

namespace tessera {
namespace {

TEST(TerminalText, EscapesControlsInEveryLineAndKeepsLineBreaks) {
  EXPECT_EQ(TerminalText("queue \x1b]0;pwned\x07\nnext \x1b[2J line\n"),
            "queue \\x1b]0;pwned\\x07\nnext \\x1b[2J line\n");
  EXPECT_EQ(TerminalText("no newline at the end\r"), "no newline at the end\\x0d");
  EXPECT_EQ(TerminalText(""), "");
  EXPECT_EQ(TerminalText("\n\n"), "\n\n");
}

TEST(TerminalText, KeepsUtf8AndEscapesBytesThatAreNot) {
  EXPECT_EQ(TerminalText("équipe \xff\xfe ns\xc3"), "équipe \\xff\\xfe ns\\xc3");
  EXPECT_EQ(TerminalText("C1 control \xc2\x9b"), "C1 control \\xc2\\x9b");
}

TEST(DumpJson, ReplacesBytesThatAreNotUtf8InsteadOfThrowing) {
  nlohmann::json doc = {{"name", "j\xff\xfe"}, {"namespace", "ns\xc3"}, {"ok", "équipe"}};
  EXPECT_THROW((void)doc.dump(), nlohmann::json::type_error);  // what aborted before
  std::string text;
  ASSERT_NO_THROW(text = DumpJson(doc));
  nlohmann::json back = nlohmann::json::parse(text);
  EXPECT_EQ(back["name"], "j\xef\xbf\xbd\xef\xbf\xbd");  // U+FFFD twice
  EXPECT_EQ(back["namespace"], "ns\xef\xbf\xbd");
  EXPECT_EQ(back["ok"], "équipe");
}

TEST(DumpJson, EscapesControlCharactersAndIndents) {
  nlohmann::json doc = {{"q", "a\x1b[2J"}};
  EXPECT_EQ(DumpJson(doc), "{\"q\":\"a\\u001b[2J\"}");
  EXPECT_EQ(DumpJson(doc, 2), "{\n  \"q\": \"a\\u001b[2J\"\n}");
}

}  // namespace
}  // namespace tessera
