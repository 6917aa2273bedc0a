package index

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

func TestReportListsAreNeverNull(t *testing.T) {
	db, _ := newDB(t)
	idx, err := db.Inspect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{
		AddResult{}, &AddResult{Packages: []PackageResult{{Name: "p"}}}, RemoveResult{}, ExportResult{},
		idx, Index{Packages: []Package{{Name: "p", Channels: []Channel{{Name: "c"}}, Bundles: []Bundle{{Name: "b"}}}}},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("null")) {
			t.Errorf("%T: %s", v, b)
		}
	}
}
