//! Scenarios in nested modules, with the same function name twice: each registration is
//! anonymous (`const _`), so they do not collide.

mod api {
    pub(crate) mod items {
        #[loadbench::scenario(count = 10)]
        pub(crate) async fn get(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
            ctx.get("/items/1").send().await?;
            Ok(())
        }
    }

    mod users {
        #[loadbench::scenario(duration = "5s", name = "users::get")]
        async fn get(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {
            ctx.get("/users/1").send().await?;
            Ok(())
        }
    }
}

fn main() {
    // Still an ordinary function.
    let _ = api::items::get;
}
