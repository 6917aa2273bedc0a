package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type inner struct {
	Names []string          `json:"names"`
	Skips []string          `json:"skips,omitempty"`
	Tags  map[string]string `json:"tags"`
	Raw   json.RawMessage   `json:"raw,omitempty"`
}

type outer struct {
	Items  []inner  `json:"items"`
	First  *inner   `json:"first"`
	None   *inner   `json:"none"`
	Any    any      `json:"any"`
	Nested [][]int  `json:"nested"`
	Fixed  [1]inner `json:"fixed"`
}

// Every list a command writes with -o json is [], never null, however
// the value was built.
func TestWriteJSONListsNeverNull(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	v := outer{Items: []inner{{}}, First: &inner{}, Any: inner{}, Nested: [][]int{nil}}
	require.NoError(t, WriteJSON(&buf, v))
	assert.JSONEq(t, `{
	  "items": [{"names": [], "tags": {}}],
	  "first": {"names": [], "tags": {}},
	  "none": null,
	  "any": {"names": [], "tags": {}},
	  "nested": [[]],
	  "fixed": [{"names": [], "tags": {}}]
	}`, buf.String())
	assert.Nil(t, v.Items[0].Names, "the value written is not changed")

	buf.Reset()
	require.NoError(t, WriteJSON(&buf, []string(nil)))
	assert.Equal(t, "[]\n", buf.String())
}

func TestNewErrorObject(t *testing.T) {
	t.Parallel()
	e := NewErrorObject(errors.New("load bundle x: not found\nnothing was added; check the reference"), 1)
	assert.Equal(t, ErrorDetail{Message: "load bundle x: not found", Code: 1, Hint: "nothing was added; check the reference"}, e.Error)
	var buf bytes.Buffer
	require.NoError(t, WriteJSON(&buf, NewErrorObject(errors.New("bad"), 2)))
	assert.JSONEq(t, `{"error": {"message": "bad", "code": 2, "hint": ""}}`, buf.String())
}
