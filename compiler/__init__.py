"""spec compiler: spec text -> parse tree -> typed AST -> checks -> expansion -> compiled suite."""
