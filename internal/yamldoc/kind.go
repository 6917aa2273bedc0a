package yamldoc

// KindOf names the kind of a decoded JSON or YAML value (what
// json.Unmarshal into an any gives) for messages: "an object", "a list",
// "a string", "a boolean", "a number" or "null".
func KindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}
