/** A module of typebox's build (`node_modules/typebox/build/…`), by its path ending. */
export declare const TYPEBOX_MODULE: RegExp;
/** Whether a typebox module's source holds module-level state. */
export declare function hasModuleState(source: string): boolean;
/** Whether the file at `path` is a typebox module with module-level state (read once per path). */
export declare function isStatefulTypeboxModule(path: string): boolean;
