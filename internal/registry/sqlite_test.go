package registry

import "testing"

// TestInListLong: lists of any length are valid SQL with their arguments
// (long ones as one JSON array, under sqlite's limit on arguments).
func TestInListLong(t *testing.T) {
	b := openRef(t, "etcd.replaces.db")
	for _, n := range []int{1, 500, 501, 40000} {
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = int64(i + 1)
		}
		in, args := inList(ids)
		var count int
		if err := b.db.QueryRow(`SELECT COUNT(*) FROM channel_entry WHERE entry_id IN `+in, args...).Scan(&count); err != nil {
			t.Fatalf("%d ids: %v", n, err)
		}
		if want := min(n, 7); count != want {
			t.Errorf("%d ids: %d entries, want %d", n, count, want)
		}
	}
}
