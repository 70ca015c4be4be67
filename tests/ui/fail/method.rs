struct Api;

impl Api {
    #[loadbench::scenario(count = 1)]
    async fn hello(&mut self) -> loadbench::Result<()> {
        Ok(())
    }
}

fn main() {}
