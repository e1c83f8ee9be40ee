// Placeholder: filled by the interpreter work (issue #5).
