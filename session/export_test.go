package session

func init() { invariantPanics = true }
