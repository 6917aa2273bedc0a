package catalogql

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// Documents graphql-go's parser and validation recurse on without bound
// are refused before either runs: one error, no data. (A fragment cycle
// reaching validation overflows the stack and ends this test binary.)
// testdata/catalogd's hostile table has catalogd's fate for each.
func TestRefusesRecursiveDocuments(t *testing.T) {
	t.Parallel()
	s, err := Build(source(`{"schema":"olm.bundle","name":"b1","package":"p"}`))
	if err != nil {
		t.Fatal(err)
	}
	chain := func(n int) string {
		var b strings.Builder
		b.WriteString("{ summary { totalSchemas } } ")
		for i := range n {
			fmt.Fprintf(&b, "fragment F%d on Query { ...F%d } ", i, i+1)
		}
		fmt.Fprintf(&b, "fragment F%d on Query { summary { totalSchemas } }", n)
		return b.String()
	}
	doubling := "{ summary { totalSchemas } } "
	for i := range 20 {
		doubling += fmt.Sprintf("fragment A%d on Query { ...A%d ...B%d } fragment B%d on Query { ...A%d ...B%d } ", i, i+1, i+1, i, i+1, i+1)
	}
	doubling += "fragment A20 on Query { summary { totalSchemas } } fragment B20 on Query { summary { totalSchemas } }"
	for _, tc := range []struct{ name, query, want string }{
		{"self", `fragment A on Query { ...A } { ...A }`, `Cannot spread fragment "A" within itself.`},
		{"self, unused", `{ summary { totalSchemas } } fragment A on Query { ...A }`, `Cannot spread fragment "A" within itself.`},
		{"pair", `{ summary { totalSchemas } } fragment A on Query { ...B } fragment B on Query { ...A }`, `Cannot spread fragment "A" within itself via B.`},
		{"through inline fragments and fields", `{ olmbundles { ...F } } fragment F on OlmBundle { ... on OlmBundle { name ...G } } fragment G on OlmBundle { ...F }`, `Cannot spread fragment "F" within itself via G.`},
		{"duplicate names", `{ summary { totalSchemas } } fragment A on Query { summary { totalSchemas } } fragment A on Query { ...A }`, `Cannot spread fragment "A" within itself.`},
		{"nested selections", "{" + strings.Repeat("summary {", 5000) + strings.Repeat("}", 5001), "query nests more than 256 levels"},
		{"nested lists", "{ olmbundles(limit: " + strings.Repeat("[", 30000) + strings.Repeat("]", 30000) + ") { name } }", "query nests more than 256 levels"},
		{"nested objects", "{ olmbundles(limit: " + strings.Repeat("{a: ", 20000) + "1" + strings.Repeat("}", 20000) + ") { name } }", "query nests more than 256 levels"},
		{"nested in a default value", "query Q($a: Int = " + strings.Repeat("[", 300) + strings.Repeat("]", 300) + ") { summary { totalSchemas } }", "query nests more than 256 levels"},
		{"long chain", chain(2000), `fragment "F0" leads through more than 32 fragments`},
		{"doubling chain", doubling, `fragment "A0" comes to more than 5000 selections`},
		{"spread 6,000 times", "{ " + strings.Repeat("...F ", 6000) + "} fragment F on Query { summary { totalSchemas } }", "query comes to more than 5000 selections"},
	} {
		res := s.Do(context.Background(), tc.query)
		if res.Data != nil || len(res.Errors) != 1 || !strings.HasPrefix(res.Errors[0].Message, tc.want) {
			t.Errorf("%s: data %v errors %+v, want %q", tc.name, res.Data, res.Errors, tc.want)
		}
	}
	// Within the bounds, and braces inside strings and comments do not count.
	for _, q := range []string{
		"{ summary { totalSchemas } } # " + strings.Repeat("{", 1000),
		`{ olmbundles { name } } fragment F on OlmBundle { name } fragment G on OlmBundle { ...F }`,
		`query Q($s: String = "` + strings.Repeat("[", 1000) + `") { summary { totalSchemas } }`,
		`query Q($s: String = """` + strings.Repeat("{", 1000) + `\""" """) { summary { totalSchemas } }`,
		chain(20),
	} {
		res := s.Do(context.Background(), q)
		for _, e := range res.Errors {
			if strings.Contains(e.Message, "nests more") || strings.Contains(e.Message, "fragments") && !strings.Contains(e.Message, "never used") {
				t.Errorf("%.80s: %s", q, e.Message)
			}
		}
	}
}

func FuzzCheckComplexity(f *testing.F) {
	for _, seed := range []string{
		`fragment A on Query { ...A } { ...A }`,
		`{ olmbundles(limit: [[[1]]]) { name } }`,
		`query Q($s: String = """{ \""" """) { a }`,
		`{ a } fragment F on Q { ...G } fragment G on Q { ...H ...H }`,
		"{ a # {{{\n }",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, q string) {
		_ = checkComplexity(q) // must return, without overflowing
	})
}
