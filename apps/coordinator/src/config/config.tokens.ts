/** DI token of the parsed `Config` (a value provider set up by `AppModule.forRoot`). */
export const CONFIG = Symbol('lease-fence:config');
