package resolve

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
)

// props decodes a property list as OLM hands it to a cel rule.
func celProps(t *testing.T, js string) []any {
	t.Helper()
	var ps []map[string]any
	if err := json.Unmarshal([]byte(js), &ps); err != nil {
		t.Fatal(err)
	}
	out := make([]any, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}

const celDB = `[{"type":"olm.package","value":{"packageName":"db","version":"1.5.0"}},
 {"type":"olm.gvk","value":{"group":"db.example.com","kind":"Database","version":"v1"}},
 {"type":"olm.label","value":{"label":"tier=gold"}},
 {"type":"olm.maxOpenShiftVersion","value":4.12},
 {"type":"custom","value":["a","b"]}]`

func TestCELRules(t *testing.T) {
	props := celProps(t, celDB)
	for _, c := range []struct {
		rule string
		want bool
	}{
		{`properties.exists(p, p.type == "olm.package" && semver_compare(p.value.version, "1.2.0") >= 0)`, true},
		{`properties.exists(p, p.type == "olm.package" && semver_compare(p.value.version, "2.0.0") >= 0)`, false},
		// p.value.version errors on the label and the list, and is absorbed
		// by the other properties' answers.
		{`properties.exists(p, semver_compare(p.value.version, "1.5.0") == 0)`, true},
		{`properties.exists(p, p.type == "olm.gvk" && p.value.kind == "Database" && p.value.version in ["v1", "v2"])`, true},
		{`properties.all(p, p.type != "olm.deprecated")`, true},
		{`properties.exists_one(p, p.type == "olm.package")`, true},
		{`properties.exists(p, p.type == "olm.maxOpenShiftVersion" && p.value == 4.12)`, true},
		{`properties.exists(p, p.type == "olm.maxOpenShiftVersion" && p.value > 4)`, true},
		{`properties.exists(p, has(p.value.label) && p.value.label.startsWith("tier="))`, true},
		{`properties.exists(p, p.type == "custom" && size(p.value) == 2 && "b" in p.value)`, true},
		{`properties.exists(p, p.type == "olm.label" && p.value.label.matches("^tier=(gold|silver)$"))`, true},
		{`size(properties) == 5 && !(1 > 2) || false`, true},
		{`properties[0].value.packageName + "-x" == 'db-x'`, true},
		{`properties.exists(p, p.value.nosuch == 1)`, false}, // error: false
		{`1 / 0 == 1 || true`, true},  // error absorbed by ||
		{`1 / 0 == 1 && true`, false}, // error: false
		{`properties.size() > 1 ? true : false`, true},
		{`properties[0].type == 1`, false}, // dyn: unequal at run time
		{`r"a\d" == "a\\d" && "\u00e9" == "é" && 0x10 == 16 && 3u == 3u`, true},
		{`properties.exists(p, p.type == "olm.gvk" && semver_compare(p.value.version, "1.0.0") == 0)`, true}, // v1 parses tolerantly
	} {
		prog, err := compileCEL(c.rule)
		if err != nil {
			t.Errorf("%s: %v", c.rule, err)
			continue
		}
		if got := prog.matches(props); got != c.want {
			t.Errorf("%s = %v, want %v", c.rule, got, c.want)
		}
	}
}

// Rules OLM's CEL environment refuses to compile fail the resolution.
func TestCELCompileErrors(t *testing.T) {
	for _, c := range []struct{ rule, msg string }{
		{`properties.size()`, "must be a bool"},
		{`properties[0].value`, "must be a bool"},
		{`nosuch == 1`, "undeclared reference"},
		{`frobnicate(properties)`, "undeclared reference to function"},
		{`properties.exists(p, p.type ==`, "unexpected"},
		{`"unterminated`, "unterminated"},
		{`1 + "a" == 2`, "no such overload"},
		{`"1" == 1`, "no such overload"},
		{`properties.exists(p, p.type.matches("("))`, ""},
		{`"a".matches("(")`, "regular expression"},
		{strings.Repeat("(", 500) + "true" + strings.Repeat(")", 500), "nests"},
	} {
		_, err := compileCEL(c.rule)
		if c.msg == "" {
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want an error with %q", c.rule, err, c.msg)
		}
	}
}

// packageHint narrows the entries a rule can match only where that is
// sound: an exists over properties whose body requires the packageName.
func TestCELPackageHint(t *testing.T) {
	for rule, want := range map[string]string{
		`properties.exists(p, p.type == "olm.package" && p.value.packageName == "db" && semver_compare(p.value.version, "1.0.0") >= 0)`: "db",
		`size(properties) > 0 && properties.exists(q, "db" == q.value.packageName)`:                                                     "db",
		`properties.exists(p, p.value.packageName == "db" || p.value.packageName == "x")`:                                               "",
		`!properties.exists(p, p.value.packageName == "db")`:                                                                            "",
		`properties.all(p, p.value.packageName == "db")`:                                                                                "",
		`properties.exists(p, p.value.packageName != "db")`:                                                                             "",
		`properties.exists(p, p.value.packageName == 1)`:                                                                                "",
		`properties.exists(p, properties.exists(q, p.value.packageName == "db"))`:                                                       "",
	} {
		prog, err := compileCEL(rule)
		if err != nil {
			t.Fatalf("%s: %v", rule, err)
		}
		if got := prog.packageHint(); got != want {
			t.Errorf("%s: hint %q, want %q", rule, got, want)
		}
	}
}

// FuzzCEL: the parser and evaluator never panic, whatever the rule.
func FuzzCEL(f *testing.F) {
	for _, s := range []string{
		`properties.exists(p, p.type == "olm.package" && semver_compare(p.value.version, "1.2.0") >= 0)`,
		`properties.all(p, p.type != "x") || size(properties) > 2u`,
		`{"a": [1, 2.5, -3, 0x1f]}["a"][1] == 2.5 ? 'x' : r"y"`,
		`!has(properties[0].value.version) && "é\u00e9\x41\101" != ""`,
		`properties.exists_one(q, int(q.value.version) / 0 == 1)`,
		`.properties.map(p, p)`,
	} {
		f.Add(s)
	}
	props := []any{
		map[string]any{"type": "olm.package", "value": map[string]any{"packageName": "db", "version": "1.5.0"}},
		map[string]any{"type": "n", "value": 4.5},
		nil,
	}
	f.Fuzz(func(t *testing.T, rule string) {
		prog, err := compileCEL(rule)
		if err != nil {
			return
		}
		prog.matches(props)
		prog.packageHint()
	})
}

// FuzzConstraint: an olm.constraint value of any shape parses to a
// requirement or an error, and a requirement tests an entry without
// panicking.
func FuzzConstraint(f *testing.F) {
	for _, s := range []string{
		`{"package":{"packageName":"db","versionRange":">=1.0.0 <2.0.0"}}`,
		`{"gvk":{"group":"db.example.com","version":"v1","kind":"Database"}}`,
		`{"failureMessage":"x","all":{"constraints":[{"package":{"packageName":"db","versionRange":"1.x"}},{"not":{"constraints":[{"gvk":{"group":"g","version":"v","kind":"K"}}]}}]}}`,
		`{"any":{"constraints":[{"cel":{"rule":"properties.exists(p, p.value.packageName == \"db\")"}}]}}`,
		`{"cel":{"rule":"properties.size() > 1"}}`,
		`{"unknown":1}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	e := &entry{name: "db.v1.5.0", pkg: "db", idx: newIndex()}
	e.props = bundleProps([]fbc.Property{
		{Type: fbc.PropertyPackage, Value: json.RawMessage(`{"packageName":"db","version":"1.5.0"}`)},
		{Type: fbc.PropertyGVK, Value: json.RawMessage(`{"group":"g","kind":"K","version":"v"}`)},
		{Type: "odd", Value: json.RawMessage(`[1,{"packageName":"x"}]`)},
	})
	e.derive()
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := predicateFor(fbc.PropertyConstraint, raw)
		if err != nil || p == nil {
			return
		}
		p.test(e)
		p.words()
		p.packages(e.idx)
	})
}
