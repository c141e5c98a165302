-- mfu database schema, version 6: code classes. Each user-space function is
-- classified by what it is (compute kernel, runtime layer, synchronization
-- wait, neutral helper, or the program's own unclassified code), and each
-- sample's class names the frame it came from. docs/metrics.md ("Code
-- classes") gives the rules and docs/schema.md every column.

PRAGMA user_version = 6;

-- compute | dispatch | sync | neutral | user (the program's own code);
-- NULL for kernel frames and addresses in no mapping.
ALTER TABLE symbol ADD COLUMN class TEXT;
-- symbol.id of the frame whose class the stack's user-mode samples took
-- (the innermost compute frame, else the innermost frame that is not
-- neutral, else the innermost user frame); NULL without user frames.
ALTER TABLE stack ADD COLUMN class_symbol INTEGER;
