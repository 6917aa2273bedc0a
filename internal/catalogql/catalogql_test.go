package catalogql

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// memSource is a catalog in memory: schemas and blobs in order.
type memSource struct {
	schemas []string
	blobs   []string
}

func (m *memSource) EachBlob(fn func(string, []byte) error) error {
	for i, b := range m.blobs {
		if err := fn(m.schemas[i], []byte(b)); err != nil {
			return err
		}
	}
	return nil
}

func (m *memSource) SchemaBlobs(schema string, offset, limit int, admit func(int64) error) ([][]byte, error) {
	var out [][]byte
	for i, b := range m.blobs {
		if m.schemas[i] != schema {
			continue
		}
		if offset > 0 {
			offset--
			continue
		}
		if len(out) == limit {
			break
		}
		if err := admit(int64(len(b))); err != nil {
			return nil, err
		}
		out = append(out, []byte(b))
	}
	return out, nil
}

func source(blobs ...string) *memSource {
	m := &memSource{}
	for _, b := range blobs {
		var v struct {
			Schema string `json:"schema"`
		}
		_ = json.Unmarshal([]byte(b), &v)
		m.schemas = append(m.schemas, v.Schema)
		m.blobs = append(m.blobs, b)
	}
	return m
}

// The names catalogd's documentation gives as examples, and its corner cases.
func TestFieldName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"package-name":    "packageName",
		"default_channel": "defaultChannel",
		"123invalid":      "field_123invalid",
		"":                "value",
		"CSV_THING":       "csvThing",
		"__private":       "private",
		"a..b":            "aB",
		"skipRange":       "skipRange",
		"---":             "field_",
	} {
		if got := fieldName(in); got != want {
			t.Errorf("fieldName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"olm.bundle": "OlmBundle", "my.odd-schema": "MyOddSchema", "9lives.x": "LivesX", "...": "Unknown",
	} {
		if got := typeName(in); got != want {
			t.Errorf("typeName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := queryField("olm.bundle"); got != "olmbundles" {
		t.Errorf("queryField = %q", got)
	}
}

// Schemas whose GraphQL names collide make no schema: catalogd refuses to
// serve such a catalog.
func TestBuildRefusesCollidingSchemas(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{{"a.b", "a-b"}, {"ab", "a.b"}} {
		_, err := Build(source(`{"schema":"`+pair[0]+`"}`, `{"schema":"`+pair[1]+`"}`))
		if err == nil || !strings.Contains(err.Error(), pair[0]) || !strings.Contains(err.Error(), pair[1]) {
			t.Errorf("%v: err = %v, want one naming both schemas", pair, err)
		}
	}
}

// A schema that makes no valid or no unique GraphQL type name is refused,
// saying what to do.
func TestBuildRefusesUnnameableSchemas(t *testing.T) {
	t.Parallel()
	for _, blobs := range [][]string{
		{`{"schema":"1x"}`},
		{`{"schema":"query"}`},
		{`{"schema":"olm.bundle","properties":[{"type":"a"}]}`, `{"schema":"olm.bundle.properties"}`},
	} {
		_, err := Build(source(blobs...))
		if err == nil || !strings.Contains(err.Error(), "rename the schema") {
			t.Errorf("%v: err = %v", blobs, err)
		}
	}
}

func TestDoPagesAndSummarises(t *testing.T) {
	t.Parallel()
	s, err := Build(source(
		`{"schema":"olm.bundle","name":"b1","n":1}`,
		`{"schema":"olm.package","name":"p"}`,
		`{"schema":"olm.bundle","name":"b2","n":2.5}`,
		`{"name":"no schema"}`,
	))
	if err != nil {
		t.Fatal(err)
	}
	res := s.Do(context.Background(), `{ olmbundles(offset: 1) { name n } summary { totalSchemas schemas { name totalObjects totalFields } } }`)
	got, _ := json.Marshal(res)
	// n is an Int (its first value is whole): graphql-go truncates 2.5.
	want := `{"data":{"olmbundles":[{"n":2,"name":"b2"}],"summary":{"schemas":[{"name":"olm.bundle","totalFields":3,"totalObjects":2},{"name":"olm.package","totalFields":2,"totalObjects":1}],"totalSchemas":2}}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	res = s.Do(context.Background(), "{ "+strings.Repeat("olmbundles { name } ", 501)+"}")
	if len(res.Errors) != 1 || res.Errors[0].Message != "query exceeds maximum field count of 500" {
		t.Errorf("501 fields: %+v", res.Errors)
	}
}
