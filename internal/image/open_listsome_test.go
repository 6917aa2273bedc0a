package image

import (
	"fmt"
	"strings"
	"testing"
)

// TestListSomeBoundsMessages: an index of 10,000 platforms made the error
// one 159 KB line; it names ten and counts the rest.
func TestListSomeBoundsMessages(t *testing.T) {
	var items []string
	for i := 0; i < 10000; i++ {
		items = append(items, fmt.Sprintf("linux/arch%d", i))
	}
	got := listSome(items, 10)
	if len(got) > 200 || !strings.HasSuffix(got, "and 9990 more") || !strings.HasPrefix(got, "linux/arch0, ") {
		t.Errorf("listSome: %d bytes: %.200s", len(got), got)
	}
	if got := listSome(items[:2], 10); got != "linux/arch0, linux/arch1" {
		t.Errorf("short list: %q", got)
	}
}
