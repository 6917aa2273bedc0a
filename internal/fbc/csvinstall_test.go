package fbc

import (
	"testing"
)

// TestDecodeCSVInstall: the one decoder of what OLM v1 reads of a CSV and
// of olm.csv.metadata (issue 36's fold).
func TestDecodeCSVInstall(t *testing.T) {
	m, err := DecodeCSVMetadata([]byte(`{"installModes":[{"type":"OwnNamespace","supported":true},{"type":"AllNamespaces","supported":false}],"apiServiceDefinitions":{"owned":[{"name":"v1.a"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if modes, all := m.Supported(); all || len(modes) != 1 || modes[0] != "OwnNamespace" || len(m.OwnedAPIServices) != 1 {
		t.Errorf("csv-metadata: %v %v %+v", modes, all, m)
	}
	c, err := DecodeCSVInstall([]byte(`{"kind":"ClusterServiceVersion","spec":{"installModes":[{"type":"AllNamespaces","supported":true}],"webhookdefinitions":[{"type":"ValidatingAdmissionWebhook","generateName":"v.example.com"}]}}`))
	if err != nil || c == nil {
		t.Fatal(c, err)
	}
	if _, all := c.Supported(); !all || len(c.Webhooks) != 1 || c.Webhooks[0].GenerateName != "v.example.com" {
		t.Errorf("CSV: %+v", c)
	}
	if c, err := DecodeCSVInstall([]byte(`{"kind":"CustomResourceDefinition","spec":{}}`)); c != nil || err != nil {
		t.Errorf("not a CSV: %v %v", c, err)
	}
	if _, err := DecodeCSVMetadata([]byte(`{"installModes":"all"}`)); err == nil {
		t.Error("installModes not a list: want an error")
	}
}

func FuzzDecodeCSVInstall(f *testing.F) {
	f.Add([]byte(`{"kind":"ClusterServiceVersion","spec":{"installModes":[{"type":"AllNamespaces","supported":true}]}}`))
	f.Add([]byte(`{"installModes":[{"type":"OwnNamespace","supported":true}],"apiServiceDefinitions":{"owned":[{"name":"x"}]}}`))
	f.Add([]byte(`{"kind":"ClusterServiceVersion","spec":{"webhookdefinitions":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, dec := range []func([]byte) (*CSVInstall, error){DecodeCSVInstall, func(b []byte) (*CSVInstall, error) { return DecodeCSVMetadata(b) }} {
			c, err := dec(data)
			if err != nil || c == nil {
				continue
			}
			modes, all := c.Supported()
			if len(modes) > len(c.InstallModes) || (all && len(modes) == 0) {
				t.Fatalf("Supported: %v %v of %+v", modes, all, c.InstallModes)
			}
		}
	})
}
