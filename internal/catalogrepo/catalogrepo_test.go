package catalogrepo

import (
	"testing"

	"github.com/opmkit/opm/internal/fbc"
)

func TestMigrateLevelByOpenShiftVersion(t *testing.T) {
	t.Parallel()
	for cat, want := range map[string]fbc.MigrateLevel{
		"v4.12": fbc.MigrateNone, "v4.16": fbc.MigrateNone, "4.16": fbc.MigrateNone,
		"v4.17": fbc.MigrateCSVMetadata, "v4.20": fbc.MigrateCSVMetadata, "v5.0": fbc.MigrateCSVMetadata,
	} {
		got, err := MigrateLevel(cat)
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", cat, got, err, want)
		}
	}
	for _, bad := range []string{"", "latest", "v4", "v4.16.1", "v4.x"} {
		if _, err := MigrateLevel(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}
