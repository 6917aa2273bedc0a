package validate

import (
	"bytes"
	"encoding/json"
)

// Result and BundleReport marshal empty lists as [], never null, however
// they were built (WriteJSON has its own document; these cover callers that
// marshal the types directly).

func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the caller's encoder decides about escaping
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// MarshalJSON writes empty lists as [].
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	p := plain(r)
	if p.Bundles == nil {
		p.Bundles = []BundleReport{}
	}
	return marshalPlain(p)
}

// MarshalJSON writes empty lists as [].
func (r BundleReport) MarshalJSON() ([]byte, error) {
	type plain BundleReport
	p := plain(r)
	if p.Findings == nil {
		p.Findings = []Finding{}
	}
	return marshalPlain(p)
}
